package websocket_test

import (
	"crypto/tls"
	"net"
	"net/http"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/celeris-dev/celeris/internal/ws"
	"github.com/celeris-dev/celeris/websocket"
)

// dialBoth opens an h2c (prior knowledge) and an h2 (TLS, ALPN) connection to s.
func dialBoth(t *testing.T, cfg celeris.Config, register func(s *celeris.Server)) map[string]*h2client {
	t.Helper()
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Engine = testEngine
	cfg.TLSAddr = "127.0.0.1:0"
	cfg.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert.TLS}}
	s, addr := celeristest.Serve(t, cfg, register)
	out := map[string]*h2client{}
	for _, transport := range []string{"h2c", "h2"} {
		var nc net.Conn
		if transport == "h2c" {
			nc, err = net.Dial("tcp", addr)
		} else {
			nc, err = tls.Dial("tcp", s.TLSAddr().String(), &tls.Config{RootCAs: cert.Pool(), ServerName: "localhost", NextProtos: []string{"h2"}})
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		out[transport] = dialH2(t, nc)
	}
	return out
}

// RFC 8441 §3: SETTINGS_ENABLE_CONNECT_PROTOCOL is advertised, over TLS and h2c,
// only when a route can serve an extended CONNECT (a route marked with
// Route.ExtendedConnect) and the application did
// not turn it off (Config.DisableExtendedConnect). Browsers then open WebSockets
// to an Adapt'ed library (which needs HTTP/1.1) on an HTTP/1.1 connection.
func TestEnableConnectProtocolAdvertised(t *testing.T) {
	plain := func(s *celeris.Server) {
		s.GET("/bench", func(c *celeris.Context) error { return c.String(200, "OK") })
		s.GET("/gorilla", celeris.Adapt(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "an adapted WebSocket library", http.StatusBadRequest)
		})))
	}
	wrapped := func(s *celeris.Server) {
		plain(s)
		s.GET("/ws", func(c *celeris.Context) error {
			return websocket.Upgrade(c, nil, func(*websocket.Conn) {})
		}).ExtendedConnect()
	}
	for _, tc := range []struct {
		name     string
		cfg      celeris.Config
		register func(s *celeris.Server)
		want     uint32
	}{
		{name: "no websocket route", register: plain, want: 0},
		{name: "websocket.Handler route", register: echoRoutes, want: 1},
		{name: "route marked ExtendedConnect", register: wrapped, want: 1},
		{name: "turned off", cfg: celeris.Config{DisableExtendedConnect: true}, register: echoRoutes, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for transport, c := range dialBoth(t, tc.cfg, tc.register) {
				if got := c.settings[0x8]; got != tc.want {
					t.Errorf("%s: SETTINGS_ENABLE_CONNECT_PROTOCOL = %d, want %d", transport, got, tc.want)
				}
			}
		})
	}
}

// RFC 9110 §9.3.6: a 2xx answer to CONNECT opens a tunnel and carries no
// Content-Length. An extended CONNECT to a route that is not a WebSocket endpoint
// (a GET route answering with a body, an Adapt'ed handler) gets 405 with Allow,
// never that route's 200; to a path with no route, 404. A WebSocket route marked
// with Route.ExtendedConnect serves it.
func TestExtendedConnectToOtherRoutes(t *testing.T) {
	register := func(s *celeris.Server) {
		echoRoutes(s)
		s.GET("/bench", func(c *celeris.Context) error { return c.String(200, "OK") })
		s.GET("/adapted", celeris.Adapt(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("adapted"))
		})))
		s.GET("/wrapped", func(c *celeris.Context) error {
			return websocket.UpgradeEvents(c, nil, websocket.Callbacks{
				OnMessage: func(c *websocket.Conn, t websocket.MessageType, msg []byte) error { return c.WriteMessage(t, msg) },
			})
		}).ExtendedConnect()
	}
	for transport, c := range dialBoth(t, celeris.Config{}, register) {
		id := uint32(1)
		for _, tc := range []struct {
			path, status, allow string
		}{
			{path: "/bench", status: "405", allow: "GET, HEAD"},
			{path: "/adapted", status: "405", allow: "GET, HEAD"},
			{path: "/none", status: "404"},
		} {
			c.connect(id, "localhost", tc.path)
			fields, _, _ := c.next(id)
			if fields[":status"] != tc.status || fields["allow"] != tc.allow {
				t.Errorf("%s %s: %v, want %s with Allow %q", transport, tc.path, fields, tc.status, tc.allow)
			}
			id += 2
		}
		c.connect(id, "localhost", "/wrapped")
		if fields, _, _ := c.next(id); fields[":status"] != "200" || fields["content-length"] != "" {
			t.Fatalf("%s /wrapped: %v, want 200 without Content-Length", transport, fields)
		}
		st := &wsStream{c: c, id: id}
		st.send(ws.OpText, []byte("tunnel"), false)
		if h, p, _ := st.read(); h.Op != ws.OpText || string(p) != "tunnel" {
			t.Fatalf("%s /wrapped echo: op %d %q", transport, h.Op, p)
		}
	}
}
