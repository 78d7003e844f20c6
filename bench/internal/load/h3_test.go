package load

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/catalog"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/quic-go/quic-go/http3"
)

// h3Server starts quic-go's HTTP/3 server on a loopback UDP port.
func h3Server(t *testing.T) string {
	t.Helper()
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bench", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "" {
			http.Error(w, "Accept-Encoding sent", http.StatusBadRequest)
			return
		}
		io.WriteString(w, "OK")
	})
	mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		io.WriteString(w, strconv.FormatInt(n, 10))
	})
	srv := &http3.Server{Handler: mux, TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert.TLS}})}
	go srv.Serve(pc)
	t.Cleanup(func() { srv.Close(); pc.Close() })
	return pc.LocalAddr().String()
}

// TestRunH3: the fixed driver over HTTP/3 runs Conns x Streams clients on
// quic-go's client and counts their answers.
func TestRunH3(t *testing.T) {
	addr := h3Server(t)
	for _, tt := range []struct {
		method, path string
		body         []byte
	}{
		{"GET", "/bench", nil},
		{"POST", "/upload", make([]byte, 4096)},
	} {
		res, err := Run(context.Background(), Options{
			Target: Target{Proto: catalog.H3, Addr: addr, Method: tt.method, Path: tt.path, Body: tt.body, Streams: 3},
			Mode:   ModeFixed, Conns: 2, Duration: 300 * time.Millisecond, Warmup: 50 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.RPS <= 0 || res.Clients != 6 || res.Total.Errors != 0 || res.Total.Non2xx != 0 {
			t.Fatalf("%s %s: %+v", tt.method, tt.path, res.Total)
		}
	}
}
