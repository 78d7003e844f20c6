package celeris

import (
	"bytes"
	"net/http"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/internal/h2raw"
)

// An http.Handler mounted with Adapt on a route marked ExtendedConnect gets an
// RFC 8441 extended CONNECT as net/http's HTTP/2 server presents it (with extended
// CONNECT enabled): Method CONNECT, r.Header[":protocol"], r.Body the client's
// DATA; after WriteHeader(200) and Flush its writes are the tunnel's DATA, with no
// Content-Length (RFC 9110 §9.3.6). A library that speaks RFC 8441 over net/http
// runs unchanged through Adapt this way.
func TestAdaptExtendedConnect(t *testing.T) {
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/tunnel", Adapt(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodConnect || r.Header.Get(":protocol") != "websocket" || r.ProtoMajor != 2 {
				http.Error(w, "want an extended CONNECT, got "+r.Method+" "+r.Header.Get(":protocol"), http.StatusBadRequest)
				return
			}
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
			buf := make([]byte, 64)
			for {
				n, err := r.Body.Read(buf)
				if n > 0 {
					w.Write(bytes.ToUpper(buf[:n]))
					http.NewResponseController(w).Flush()
				}
				if err != nil {
					return
				}
			}
		}))).ExtendedConnect()
	})
	nc, fr, settings, err := h2raw.Open(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if settings[http2.SettingEnableConnectProtocol] != 1 {
		t.Fatal("SETTINGS_ENABLE_CONNECT_PROTOCOL not advertised for a route marked ExtendedConnect")
	}
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, kv := range [][2]string{{":method", "CONNECT"}, {":protocol", "websocket"}, {":scheme", "http"}, {":path", "/tunnel"}, {":authority", "x"}} {
		enc.WriteField(hpack.HeaderField{Name: kv[0], Value: kv[1]})
	}
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true})
	dec := hpack.NewDecoder(4096, nil)
	var got []byte
	sent := false
	for !bytes.Equal(got, []byte("HELLO TUNNEL")) {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("read: %v (got %q)", err, got)
		}
		switch f := f.(type) {
		case *http2.HeadersFrame:
			fs, _ := dec.DecodeFull(f.HeaderBlockFragment())
			m := map[string]string{}
			for _, hf := range fs {
				m[hf.Name] = hf.Value
			}
			if m[":status"] != "200" || m["content-length"] != "" || f.StreamEnded() {
				t.Fatalf("answer %v (end %v), want 200 without Content-Length", m, f.StreamEnded())
			}
			if !sent {
				fr.WriteData(1, false, []byte("hello tunnel"))
				sent = true
			}
		case *http2.DataFrame:
			got = append(got, f.Data()...)
		case *http2.RSTStreamFrame, *http2.GoAwayFrame:
			t.Fatalf("%v", f)
		}
	}
	fr.WriteData(1, true, nil)
}
