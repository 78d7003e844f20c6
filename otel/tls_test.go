package celerisotel_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/selfcert"
	celerisotel "github.com/celeris-dev/celeris/otel"
)

// Over TLS (HTTP/2 by ALPN and HTTP/1.1): url.scheme "https", the protocol
// version, and server.port defaulting to 443 when the Host names no port.
func TestServerSpanTLS(t *testing.T) {
	cert, err := selfcert.New("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	tm := newTelemetry(t)
	s := celeris.New(celeris.Config{Addr: "127.0.0.1:0", TLSAddr: "127.0.0.1:0", EventLoops: 1,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}})
	s.Use(celerisotel.Middleware(celerisotel.WithTracerProvider(tm.tp), celerisotel.WithMeterProvider(tm.mp)))
	s.GET("/secure", func(c *celeris.Context) error { return c.String(200, "ok") })
	start(t, s)
	addr := s.TLSAddr().String()
	for _, tc := range []struct {
		name, version string
		h2            bool
	}{
		{name: "h2", version: "2", h2: true},
		{name: "h1", version: "1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm.spans.Reset()
			tr := &http.Transport{
				TLSClientConfig: &tls.Config{RootCAs: cert.Pool(), ServerName: "localhost"},
				DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
					var d net.Dialer
					return d.DialContext(ctx, network, addr) // Host stays "localhost"
				},
			}
			tr.Protocols = new(http.Protocols)
			if tc.h2 {
				tr.Protocols.SetHTTP2(true)
			} else {
				tr.Protocols.SetHTTP1(true)
			}
			client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
			defer client.CloseIdleConnections()
			resp, err := client.Get("https://localhost/secure")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			sp := tm.waitSpan(t, "GET /secure")
			wantAttrs(t, "TLS span", attrs(sp.Attributes()), map[string]any{
				"url.scheme": "https", "network.protocol.version": tc.version,
				"server.address": "localhost", "server.port": int64(443),
			})
		})
	}
}
