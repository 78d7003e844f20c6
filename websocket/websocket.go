// Package websocket serves WebSocket connections (RFC 6455) from Celeris handlers,
// on the event loop: frames are parsed and written by Celeris over the engine's
// buffers, with no goroutine reading each connection.
//
// Two ways to write the application side. A handler that owns the connection, as
// with gorilla/websocket, runs on a worker goroutine for the connection's whole
// life and reads with ReadMessage:
//
//	s.GET("/ws/echo", websocket.Handler(nil, func(c *websocket.Conn) {
//		for {
//			t, msg, err := c.ReadMessage()
//			if err != nil {
//				return
//			}
//			if err := c.WriteMessage(t, msg); err != nil {
//				return
//			}
//		}
//	}))
//
// Callbacks run on a worker only while there is something to do (a message
// arrived, the connection opened or closed): an idle connection holds no goroutine
// at all, only its buffers, so many thousands of mostly idle connections
// (dashboards, notifications) cost little:
//
//	s.GET("/ws/echo", websocket.Events(nil, websocket.Callbacks{
//		OnMessage: func(c *websocket.Conn, t websocket.MessageType, msg []byte) error {
//			return c.WriteMessage(t, msg)
//		},
//	}))
//
// The handshake (RFC 6455 §4.2) checks the method, the Upgrade, Connection,
// Sec-WebSocket-Key and Sec-WebSocket-Version fields (426 with the supported
// version otherwise), the Origin (Config.CheckOrigin; by default a browser's
// Origin must name the request's host), and picks a subprotocol. A message larger
// than Config.MaxMessageSize closes the connection with 1009; invalid frames with
// 1002, invalid UTF-8 with 1007. Pings are answered by Celeris. A client that does
// not read blocks writers once 1 MiB is queued for it (a message larger than 256
// KiB leaves in fragments, each queued as the client reads, so a large message is
// never copied whole), and Celeris stops reading a client whose messages the
// application does not take; memory stays bounded.
//
// The applications run on the server's worker pool: Config.MaxWorkers bounds
// them (a connection that finds no worker is closed with CloseTryAgainLater),
// and a graceful shutdown closes every connection with CloseGoingAway.
package websocket

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/hook"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/ws"
)

// MessageType is a data message's type: TextMessage or BinaryMessage (the values
// are RFC 6455's opcodes, as in gorilla/websocket).
type MessageType int

// Message types.
const (
	TextMessage   MessageType = 1
	BinaryMessage MessageType = 2
)

// Close codes (RFC 6455 §7.4.1 and the IANA registry), as gorilla/websocket
// names them. 1005 and 1006 are never sent: OnClose reports them when the peer
// sent a close frame without a code, or no close frame at all.
const (
	CloseNormalClosure    = 1000 // the purpose of the connection was fulfilled
	CloseGoingAway        = 1001 // the server shuts down, or the browser leaves the page
	CloseProtocolError    = 1002 // the peer broke the protocol
	CloseUnsupportedData  = 1003 // a message of a type the endpoint cannot take
	CloseNoStatusReceived = 1005 // never sent: a close frame without a code
	CloseAbnormalClosure  = 1006 // never sent: the connection ended without a close frame
	CloseInvalidPayload   = 1007 // a text message that is not UTF-8
	ClosePolicyViolation  = 1008 // a message that violates the endpoint's policy
	CloseMessageTooBig    = 1009 // a message larger than Config.MaxMessageSize
	CloseInternalError    = 1011 // the application failed (a panic, an OnMessage error)
	CloseServiceRestart   = 1012 // the server restarts
	CloseTryAgainLater    = 1013 // the server is overloaded (no worker: Config.MaxWorkers)
)

// Errors.
var (
	// ErrClosed is returned by reads and writes once the connection closed.
	ErrClosed = ws.ErrClosed
	// ErrDeadline is returned by a read or write whose deadline passed.
	ErrDeadline = ws.ErrDeadline
)

// CloseError is what ReadMessage returns once the peer sent a close frame: its
// code and reason. Returned from Callbacks.OnMessage, it closes the connection
// with its code.
type CloseError struct {
	Code   int    // the close code (the constants above, or 3000-4999)
	Reason string // UTF-8, at most 123 bytes
}

func (e *CloseError) Error() string {
	return "websocket: closed by the peer with code " + strconv.Itoa(e.Code) + " " + e.Reason
}

// fromWS converts the internal close error to the package's.
func fromWS(err error) error {
	var ce *ws.CloseError
	if errors.As(err, &ce) {
		return &CloseError{Code: ce.Code, Reason: ce.Reason}
	}
	return err
}

// toWS converts an application's *CloseError to the internal one.
func toWS(err error) error {
	var ce *CloseError
	if errors.As(err, &ce) {
		return &ws.CloseError{Code: ce.Code, Reason: ce.Reason}
	}
	return err
}

// DefaultMaxMessageSize bounds a message when Config.MaxMessageSize is 0.
const DefaultMaxMessageSize = 16 << 20

// Config configures the handshake and the connections. The zero value (or nil)
// is ready to use.
type Config struct {
	// Subprotocols the server speaks, in order of preference; the first one the
	// client also offers is selected (Conn.Subprotocol). A client that offers
	// none of them is still accepted, without a subprotocol (RFC 6455 §4.2.2).
	Subprotocols []string
	// CheckOrigin decides whether a request's Origin is allowed (403 if not).
	// nil: requests without Origin (non-browser clients) and those whose Origin's
	// host equals the request's Host are allowed; cross-origin browser requests
	// are refused (Cross-Site WebSocket Hijacking).
	CheckOrigin func(c *celeris.Context) bool
	// MaxMessageSize bounds a message's payload (1009 when over). 0:
	// DefaultMaxMessageSize; negative: no bound. For a compressed message it
	// bounds the inflated size too.
	MaxMessageSize int64
	// Compression accepts permessage-deflate (RFC 7692) when the client offers it:
	// messages are compressed both ways. Off by default: it costs CPU, and
	// memory per connection (a compressor of some 100s of KiB while a message is
	// written).
	Compression bool
	// CompressionLevel is the compress/flate level (0: flate.BestSpeed).
	CompressionLevel int
	// ContextTakeover keeps each side's compression window across messages
	// (better ratios for similar messages, and a compressor and a 32 KiB window
	// kept per connection). Without it, server_no_context_takeover and
	// client_no_context_takeover are negotiated: every message stands alone.
	ContextTakeover bool
}

// Conn is one WebSocket connection. Its methods may be called from any goroutine;
// writes are serialised.
type Conn struct {
	c           *ws.Conn
	subprotocol string
}

// ReadMessage waits for the next message (for Handler only; Callbacks get
// messages through OnMessage). The payload is valid until the next ReadMessage.
// Once the peer sent a close frame it returns a *CloseError, and ErrClosed once
// the connection is gone.
func (c *Conn) ReadMessage() (MessageType, []byte, error) {
	op, p, err := c.c.ReadMessage()
	return MessageType(op), p, fromWS(err)
}

// WriteMessage sends a whole message. It blocks while the client is more than
// 1 MiB behind. p is borrowed until it returns, never kept after: a message up to
// 256 KiB is copied into one frame, a larger one leaves in fragments of 256 KiB
// (RFC 6455 §5.4), each copied once the client took the output before it.
func (c *Conn) WriteMessage(t MessageType, p []byte) error {
	return c.c.WriteMessage(ws.Opcode(t), p)
}

// WriteText sends a text message.
func (c *Conn) WriteText(s string) error {
	return c.c.WriteMessage(ws.OpText, []byte(s))
}

// Ping sends a ping (payload at most 125 bytes). Celeris answers the client's
// pings itself.
func (c *Conn) Ping(p []byte) error { return c.c.Ping(p) }

// Close starts the closing handshake with a code and a reason; the connection
// ends when the client answers, or after 5 s.
func (c *Conn) Close(code int, reason string) error { return c.c.Close(code, reason) }

// Subprotocol is the subprotocol selected at the handshake ("" for none).
func (c *Conn) Subprotocol() string { return c.subprotocol }

// RemoteAddr is the client's address.
func (c *Conn) RemoteAddr() net.Addr { return c.c.RemoteAddr() }

// SetReadDeadline makes ReadMessage fail with ErrDeadline after t (zero: none).
func (c *Conn) SetReadDeadline(t time.Time) { c.c.SetReadDeadline(t) }

// SetWriteDeadline makes a write blocked by a slow client fail with ErrDeadline
// after t (zero: none).
func (c *Conn) SetWriteDeadline(t time.Time) { c.c.SetWriteDeadline(t) }

// Context is cancelled when the connection closes (or the server shuts down).
func (c *Conn) Context() context.Context { return c.c.Context() }

// Callbacks are the event-driven application side of a connection. They run on
// a worker goroutine, one at a time per connection, in order. Any may be nil.
type Callbacks struct {
	// OnOpen runs once, first.
	OnOpen func(c *Conn)
	// OnMessage runs for each message; msg is valid until it returns. An error
	// closes the connection with 1011 (or a *CloseError's code).
	OnMessage func(c *Conn, t MessageType, msg []byte) error
	// OnClose runs once the connection closed, with the close code the peer sent
	// (1005 when it sent none, 1006 when it sent no close frame).
	OnClose func(c *Conn, code int, reason string)
}

// Handler returns a route handler that upgrades and runs h for each connection.
// Its route serves the HTTP/1.1 handshake and, once marked with
// celeris.Route.ExtendedConnect, WebSocket over HTTP/2 and HTTP/3 (RFC 8441,
// RFC 9220's extended CONNECT): a server with such a route advertises
// SETTINGS_ENABLE_CONNECT_PROTOCOL (celeris.Config.DisableExtendedConnect
// turns that off). The mark is on the route, so it holds for a handler that
// wraps this one:
//
//	s.GET("/ws", websocket.Handler(nil, echo)).ExtendedConnect()
func Handler(cfg *Config, h func(c *Conn)) celeris.HandlerFunc {
	return func(c *celeris.Context) error { return Upgrade(c, cfg, h) }
}

// Events returns a route handler that upgrades and runs cb for each connection.
// Its route serves extended CONNECT over HTTP/2 and HTTP/3 once marked with
// celeris.Route.ExtendedConnect, as Handler's does.
func Events(cfg *Config, cb Callbacks) celeris.HandlerFunc {
	return func(c *celeris.Context) error { return UpgradeEvents(c, cfg, cb) }
}

// Upgrade answers the handshake and runs h for the connection, on a worker, once
// the handler that called Upgrade returned: values of c (params, headers) that h
// needs must be copied first (strings.Clone), as for anything kept past a handler.
// A request that is not a valid WebSocket handshake gets an *celeris.HTTPError
// (400, 403 or 426).
//
// A route is marked with celeris.Route.ExtendedConnect to serve WebSocket over
// HTTP/2 and HTTP/3 as well; without the mark an extended CONNECT to it gets
// 405, and its first upgrade over HTTP/1.1 is logged.
func Upgrade(c *celeris.Context, cfg *Config, h func(c *Conn)) error {
	if h == nil {
		panic("websocket: Upgrade with a nil handler")
	}
	return upgrade(c, cfg, func(conn *Conn) ws.App {
		return ws.App{Handler: func(*ws.Conn) { h(conn) }}
	})
}

// UpgradeEvents is Upgrade with callbacks.
func UpgradeEvents(c *celeris.Context, cfg *Config, cb Callbacks) error {
	return upgrade(c, cfg, func(conn *Conn) ws.App {
		app := ws.App{}
		if cb.OnOpen != nil {
			app.OnOpen = func(*ws.Conn) { cb.OnOpen(conn) }
		} else {
			app.OnOpen = func(*ws.Conn) {}
		}
		if cb.OnMessage != nil {
			app.OnMessage = func(_ *ws.Conn, op ws.Opcode, p []byte) error {
				return toWS(cb.OnMessage(conn, MessageType(op), p))
			}
		}
		if cb.OnClose != nil {
			app.OnClose = func(_ *ws.Conn, code int, reason string) { cb.OnClose(conn, code, reason) }
		}
		return app
	})
}

func upgrade(c *celeris.Context, cfg *Config, app func(*Conn) ws.App) error {
	if cfg == nil {
		cfg = &Config{}
	}
	// RFC 8441 (HTTP/2) and RFC 9220 (HTTP/3): the same extended CONNECT.
	h2 := c.Proto() == "HTTP/2.0" || c.Proto() == "HTTP/3.0"
	if err := checkHandshake(c, h2); err != nil {
		return err
	}
	if !checkOrigin(c, cfg) {
		return celeris.NewHTTPError(http.StatusForbidden, "websocket: origin not allowed")
	}
	conn := &Conn{subprotocol: selectSubprotocol(c, cfg)}
	var header []httpmsg.Field
	if !h2 {
		// RFC 6455 §4.2.2 item 5.
		header = append(header,
			httpmsg.Field{Name: "Upgrade", Value: "websocket"},
			httpmsg.Field{Name: "Connection", Value: "Upgrade"},
			httpmsg.Field{Name: "Sec-WebSocket-Accept", Value: ws.AcceptKey(c.Header("Sec-WebSocket-Key"))})
	}
	if conn.subprotocol != "" {
		header = append(header, httpmsg.Field{Name: "Sec-WebSocket-Protocol", Value: conn.subprotocol})
	}
	var deflate *ws.Deflate
	if cfg.Compression {
		var offers []string
		c.VisitHeaders(func(name, value string) {
			if strings.EqualFold(name, "Sec-WebSocket-Extensions") {
				offers = append(offers, value)
			}
		})
		if p, ok := ws.NegotiateDeflate(offers, cfg.ContextTakeover); ok {
			deflate = &ws.Deflate{Params: p, Level: cfg.CompressionLevel}
			header = append(header, httpmsg.Field{Name: "Sec-WebSocket-Extensions", Value: p.Response()})
		}
	}
	max := cfg.MaxMessageSize
	switch {
	case max == 0:
		max = DefaultMaxMessageSize
	case max < 0:
		max = 0
	}
	a := app(conn)
	_, err := hook.Switch(c, header, func(t httpmsg.Conn) httpmsg.Proto {
		// The server's worker pool runs the application: Config.MaxWorkers
		// bounds it, and Shutdown stops it (a connection it has no worker for
		// is closed with 1013, or 1001 during shutdown).
		conn.c = ws.NewConn(t, ws.Config{MaxMessage: max, Pool: hook.Pool(c), Deflate: deflate}, a)
		conn.c.Start() // after conn.c is set: the application reads it
		return conn.c
	})
	if err != nil {
		return celeris.NewHTTPError(http.StatusBadRequest, "websocket: "+err.Error())
	}
	return nil
}

// checkHandshake applies RFC 6455 §4.2.1 (HTTP/1.1) or RFC 8441 §4-5 (HTTP/2;
// RFC 9220 §3 for HTTP/3).
func checkHandshake(c *celeris.Context, h2 bool) error {
	if c.Header("Sec-WebSocket-Version") != "13" {
		// RFC 6455 §4.2.2: 426 with the versions the server supports.
		c.SetHeader("Sec-WebSocket-Version", "13")
		return celeris.NewHTTPError(http.StatusUpgradeRequired, "websocket: unsupported Sec-WebSocket-Version")
	}
	if h2 {
		if c.Method() != http.MethodConnect || c.Header(":protocol") != "websocket" {
			return celeris.NewHTTPError(http.StatusBadRequest, "websocket: not an extended CONNECT for websocket")
		}
		return nil
	}
	if c.Method() != http.MethodGet {
		return celeris.NewHTTPError(http.StatusMethodNotAllowed, "websocket: the handshake is a GET")
	}
	if c.Proto() != "HTTP/1.1" {
		return celeris.NewHTTPError(http.StatusBadRequest, "websocket: the handshake needs HTTP/1.1")
	}
	if !listHas(c, "Connection", "upgrade") || !listHas(c, "Upgrade", "websocket") {
		c.SetHeader("Upgrade", "websocket")
		return celeris.NewHTTPError(http.StatusUpgradeRequired, "websocket: not a websocket handshake (Upgrade: websocket, Connection: Upgrade)")
	}
	if !ws.ValidKey(c.Header("Sec-WebSocket-Key")) {
		return celeris.NewHTTPError(http.StatusBadRequest, "websocket: invalid Sec-WebSocket-Key")
	}
	return nil
}

func checkOrigin(c *celeris.Context, cfg *Config) bool {
	if cfg.CheckOrigin != nil {
		return cfg.CheckOrigin(c)
	}
	origin := c.Header("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Host, c.Host())
}

func selectSubprotocol(c *celeris.Context, cfg *Config) string {
	if len(cfg.Subprotocols) == 0 {
		return ""
	}
	var offered []string
	c.VisitHeaders(func(name, value string) {
		if strings.EqualFold(name, "Sec-WebSocket-Protocol") {
			for _, p := range strings.Split(value, ",") {
				offered = append(offered, strings.TrimSpace(p))
			}
		}
	})
	for _, want := range cfg.Subprotocols {
		for _, p := range offered {
			if p == want {
				return want
			}
		}
	}
	return ""
}

// listHas reports whether the list field name of c's request holds token (ASCII
// case insensitive). Every line of the field counts: RFC 9110 §5.3 makes repeated
// lines of a list field one value, joined by commas, so "Connection: keep-alive"
// and "Connection: Upgrade" on two lines ask for an upgrade as one line with both
// would.
func listHas(c *celeris.Context, name, token string) bool {
	found := false
	c.VisitHeaders(func(n, v string) {
		if found || !strings.EqualFold(n, name) {
			return
		}
		for e := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(e), token) {
				found = true
				return
			}
		}
	})
	return found
}
