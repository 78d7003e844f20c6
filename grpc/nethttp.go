package celerisgrpc

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ServeHTTP serves one RPC under net/http (HTTP/2 only: h2c or TLS), for a
// server that mounts the same services outside Celeris. Response messages are
// flushed as they are sent; trailers use http.TrailerPrefix. The native path
// (ServeCeleris) is what celeris.Adapt uses instead.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	if hr.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "invalid gRPC request method "+hr.Method, http.StatusMethodNotAllowed)
		return
	}
	ct := hr.Header.Get("Content-Type")
	if !validContentType(ct) {
		http.Error(w, "invalid gRPC request content-type", http.StatusUnsupportedMediaType)
		return
	}
	if hr.ProtoMajor != 2 {
		http.Error(w, "gRPC requires HTTP/2", http.StatusHTTPVersionNotSupported)
		return
	}
	r := acquireRPC()
	r.w = w
	req := request{
		path:        hr.URL.Path,
		contentType: ct,
		authority:   hr.Host,
		timeout:     hr.Header.Get("Grpc-Timeout"),
		encoding:    hr.Header.Get("Grpc-Encoding"),
		remote:      remoteAddr(hr.RemoteAddr),
		tls:         hr.TLS,
		body:        hr.Body,
	}
	for k, vs := range hr.Header {
		lk := strings.ToLower(k)
		for _, v := range vs {
			req.fields = append(req.fields, field{lk, v})
		}
	}
	s.serve(r, hr.Context(), &req)
	releaseRPC(r)
}

// remoteAddr parses net/http's RemoteAddr string.
func remoteAddr(s string) net.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return net.TCPAddrFromAddrPort(ap)
	}
	return strAddr(s)
}

type strAddr string

func (a strAddr) Network() string { return "tcp" }
func (a strAddr) String() string  { return string(a) }
