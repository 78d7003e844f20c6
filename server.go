// Package celeris is a fast HTTP server and web framework. One port serves
// HTTP/1.1 and HTTP/2 cleartext (h2c) from gnet event loops; handlers get a
// familiar router, Context and error handling.
//
//	s := celeris.New(celeris.Config{Addr: ":8080"})
//	s.GET("/hello/:name", func(c *celeris.Context) error {
//		return c.String(200, "hello "+c.Param("name"))
//	})
//	log.Fatal(s.Start())
//
// Handlers run on pooled worker goroutines by default, so they may block. A route
// marked Inline runs on its connection's event loop, which is faster and must never
// block. See docs/ARCHITECTURE.md for the life of a request.
package celeris

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/celeris-dev/celeris/internal/directrun"
	"github.com/celeris-dev/celeris/internal/h1"
	"github.com/celeris-dev/celeris/internal/h2"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/router"
	"github.com/celeris-dev/celeris/internal/work"
)

// Config configures a Server. Zero values mean the defaults in brackets.
//
// # Output bound
//
// What the server holds for a connection's output is bounded by fixed amounts,
// whatever the response's size and however slowly the client reads, on both
// engines, plaintext and TLS:
//
//   - HTTP/1.1: 512 KiB of unsent output per connection (what the engine holds
//     and what a handler handed to it). A handler's Write, Flush, Blob or file
//     that would go past it waits until the client took the output down to 256 KiB,
//     or left (the call then returns an error); no further request of the
//     connection is read meanwhile.
//   - HTTP/2: 256 KiB queued per stream by its handler, whatever the peer's
//     flow-control window, and 1 MiB of DATA per connection in the engine.
//   - WebSocket: 1 MiB per connection; a message over 256 KiB leaves in
//     fragments, each queued as the client reads.
//
// A body handed whole (Blob, String, JSON) is copied when it is up to 64 KiB and
// otherwise sent from the caller's slice with its Content-Length, a piece at a
// time: the slice is borrowed until the call returns. File, FileFS, StreamLength
// and the static middleware stream with their exact length. An Inline route's
// handler must not block the event loop, so a response of it that would wait
// (a Blob body or a file over 64 KiB) is sent from a worker once the handler
// returned, within the bounds above (the Blob's slice is borrowed until then);
// what an inline handler streams (Stream, StreamLength, SSE) is queued whole,
// up to InlineStreamMax, past which Write fails with ErrInlineOutput. HTTP/1.1
// reads no request while a connection's output is above the bound, and HTTP/2
// runs an inline route's request on a worker while the connection's output
// waits. docs/ARCHITECTURE.md ("Back-pressure and closing") has the details
// and the measured memory.
type Config struct {
	Addr       string // listen address [":8080"]
	EventLoops int    // event loops [epoll: GOMAXPROCS; gnet: runtime.NumCPU()]
	ReusePort  bool   // SO_REUSEPORT on the listener (not on Windows)

	// Engine carries the connections of Addr: EngineGnet (event loops),
	// EngineEpoll (Celeris's own event loops, Linux) or EngineStd (the standard
	// library's net package) [EngineEpoll on Linux, EngineStd elsewhere; Windows
	// has EngineStd only]. TLS always uses EngineStd.
	Engine Engine

	// TLSAddr, when set, makes Start serve HTTPS on this address as well, with
	// the same routes (HTTP/2 and HTTP/1.1 chosen by ALPN). Its certificate comes
	// from TLSConfig or TLSCertFile and TLSKeyFile. [""]
	TLSAddr string
	// TLSConfig configures TLS (TLSAddr, StartTLS) as for net/http: Certificates,
	// GetCertificate (autocert.Manager.GetCertificate), ClientAuth and ClientCAs,
	// session tickets... It is cloned at start. NextProtos defaults to "h2" and
	// "http/1.1"; MinVersion to TLS 1.2. [nil]
	TLSConfig *tls.Config
	// TLSCertFile and TLSKeyFile are PEM files of a certificate chain and its
	// key, added to TLSConfig's certificates. [""]
	TLSCertFile, TLSKeyFile string
	// TLSHandshakeTimeout bounds a TLS handshake, from accept. [10s]
	TLSHandshakeTimeout time.Duration
	// AltSvc, when set, is the Alt-Svc field value (RFC 7838 §3) added to every
	// response over TLS on HTTP/1.1 and HTTP/2, advertising an alternative
	// service such as HTTP/3 (`h3=":443"; ma=86400`). A Transport (AddTransport)
	// that advertises itself fills it when empty. [""]
	AltSvc string

	// ShutdownDelay is how long Shutdown keeps accepting and serving, with
	// ReadyHandler answering 503, before it stops accepting: the
	// time a load balancer or Kubernetes needs to stop sending new connections.
	// [0]
	ShutdownDelay time.Duration

	ReadHeaderTimeout time.Duration // time to receive a request head, or HTTP/2's connection preface with its SETTINGS [10s]
	IdleTimeout       time.Duration // keep-alive idle time [60s]

	MaxURILength       int   // longer request targets get 414 [8 KiB]
	MaxHeaderBytes     int   // request line + header section, else 431 [64 KiB]
	MaxHeaderCount     int   // header fields, else 431 [256]
	MaxRequestBodySize int64 // larger bodies get 413 [4 MiB]

	DisableH2C bool // serve HTTP/1.x only: no h2c prior knowledge or Upgrade
	// DisableExtendedConnect keeps HTTP/2 (and HTTP/3) from advertising RFC
	// 8441's SETTINGS_ENABLE_CONNECT_PROTOCOL even when a route serves WebSocket
	// over HTTP/2 (Route.ExtendedConnect): browsers then open every WebSocket
	// on an HTTP/1.1 connection, as a WebSocket library mounted through Adapt
	// needs. [false]
	DisableExtendedConnect bool
	// DisableAutoOptions turns off the server's own answer to OPTIONS on a path
	// that has routes but no OPTIONS route (204 with Allow, through the Use
	// middleware, so that the CORS middleware answers preflights): such a request
	// then gets 405. [false]
	DisableAutoOptions bool

	MaxConcurrentStreams uint32 // HTTP/2 streams per connection [250]

	// MaxWorkers bounds the worker goroutines of non-inline handlers [unlimited].
	// On the std engine an HTTP/1.1 handler runs on its connection's goroutine
	// (docs/ARCHITECTURE.md, "The std engine") and only HTTP/2 streams and
	// streamed uploads take workers.
	MaxWorkers int

	// HandlersOnWorkers runs every handler that is not Inline on a worker
	// goroutine. Off (the default), such a handler runs in place first, where
	// its request was read (the epoll engine's loop; for HTTP/2 streams, the
	// std engine's connection goroutine too): no hand-off to a worker and back
	// per request. Its route learns whether it waits: once the loop had to
	// move off a run of it (it streamed, hijacked, flushed, or ran past the
	// engine's watch, 5 to 10 ms), or its runs that held the loop longer than
	// InPlaceThreshold outnumber its quick ones by 8, the route's requests go
	// to workers from then on, where their waits overlap
	// (docs/ARCHITECTURE.md, "Handlers in place"). Until then each wait stalls
	// the other connections of its loop: a route that waits costs them a few
	// waits once. [false]
	HandlersOnWorkers bool

	// InPlaceThreshold is how long a handler may hold the loop it runs in
	// place before the run counts as slow (HandlersOnWorkers). The default is
	// the Go scheduler's own threshold for taking a processor from a goroutine
	// blocked in a system call; a handler whose work alone takes longer gains
	// little in place. [20µs]
	InPlaceThreshold time.Duration

	ErrorHandler ErrorHandler // maps handler errors to responses [DefaultErrorHandler]
	Logger       *slog.Logger // cold-path logging [slog.Default()]

	// RefusalHeader, when set, adds header fields to the answers the server gives
	// to requests without running any handler or middleware (as net/http answers
	// these before its handlers): HTTP/1.1 requests the parser refuses (400, 413,
	// 414, 417, 431, 501, 505, including an HTTP/2 preface when DisableH2C is
	// set), HTTP/2 requests refused on the connection (400 malformed, 413, 431),
	// and 503 when no worker is free. It gets the status and returns the fields to
	// add, which pass the same checks as a handler's: fields the server owns
	// (Content-Length, Content-Type, Connection, Date, ...), names that are not
	// tokens and values with CR, LF or NUL are dropped. Middleware that gives
	// every response a header, such as a request id, sets it here as well: see
	// requestid.RefusalHeader. It runs on the event loops, several at once: it
	// must be safe for concurrent use, quick, never block, and return a Header
	// nothing else modifies. A panic in it leaves its fields out (logged once).
	// [nil]
	RefusalHeader func(status int) http.Header
	// RefusalBody, when set, gives the body of the same answers, with its
	// Content-Type, instead of the server's short text/plain reason: an API
	// answers them in its own format too (a JSON problem document, say). It
	// returns "" and nil to keep the server's body for a status. Same rules as
	// RefusalHeader: concurrent, quick, never blocks, returns a slice nothing
	// modifies; a panic keeps the server's body (logged once). On HTTP/2 a body
	// larger than the peer's send window is left out. [nil]
	RefusalBody func(status int) (contentType string, body []byte)

	// Framework features: Context.Bind, Context.Render, Context.ClientIP and
	// Scheme, the request accessors, routing.
	Validator Validator // checks what Bind bound; nil: no validation
	Renderer  Renderer  // templates for Context.Render; nil: Render fails
	// TrustedProxies are the networks whose X-Forwarded-For, X-Forwarded-Proto and
	// Forwarded headers Context.ClientIP and Context.Scheme believe; from any
	// other peer those headers are ignored. [none]
	TrustedProxies []netip.Prefix
	// CopyRequestValues makes Param, Query, Header, Body and the other request
	// accessors return owned copies instead of views valid until the handler
	// returns, at the cost of a copy each. [false: zero-copy]
	CopyRequestValues bool
	// RedirectTrailingSlash answers a path that matches only with (or without) a
	// trailing slash with a redirect to the route's form: 301 for GET and HEAD,
	// 308 otherwise. CleanPath first cleans the path ("//", "/./", "/../",
	// as path.Clean does) and redirects the same way to the cleaned path when
	// only that matches. [false]
	RedirectTrailingSlash bool
	CleanPath             bool
}

// Server is a Celeris HTTP server. Register routes, then Start.
type Server struct {
	cfg    Config
	router *router.Router[*Route]
	logger *slog.Logger
	pool   *work.Pool
	eng    servingEngine // serves Config.Addr
	// listener is StartListener's (guarded by mu): the std engine serves it
	// instead of listening on Config.Addr.
	listener net.Listener
	inherit  adopted       // inherited sockets taken at start (activation.go; guarded by mu)
	upg      upgradeState  // Upgrade's state (upgrade.go)
	rd       readiness     // readiness.go
	tlsEng   servingEngine // serves Config.TLSAddr
	h1tls    h1.ServerConfig
	h1cfg    h1.ServerConfig
	h2cfg    h2.Config
	ctxs     sync.Pool

	// transports are AddTransport's (guarded by mu); transportEngs run them
	// once started (transport.go).
	transports    []Transport
	transportEngs []servingEngine
	altSvc        atomic.Pointer[string] // the Alt-Svc value of TLS responses, nil for none

	routes                []*Route
	names                 map[string]*Route // named routes (routing.go)
	use, pre              []MiddlewareFunc
	notFound              HandlerFunc
	methodNotAllowed      HandlerFunc
	notFoundFinal         HandlerFunc
	methodNotAllowedFinal HandlerFunc
	preFinal              HandlerFunc
	optionsStar           *Route // OPTIONS * (target.go)
	notImplemented        *Route // 501 for CONNECT without a route and unknown long methods
	autoOptions           *Route // 204 with Allow for OPTIONS on a path without an OPTIONS route; nil with DisableAutoOptions
	connect               *Route // the route of authority-form CONNECT requests, or nil
	maxMethod             int    // the longest method of a route (or OPTIONS)
	frozen                bool
	customErrors          bool // Config.ErrorHandler is the user's (it may block)
	// What handlers in place showed (Route.inPlace) for requests no route
	// takes: Pre middleware's, and the answers without a route (404, 405).
	preInPlace, otherInPlace directrun.Record
	counters
	refusalPanicked     atomic.Bool // RefusalHeader panicked (logged once)
	refusalBodyPanicked atomic.Bool // RefusalBody panicked (logged once)
	streamBypassLogged  atomic.Bool // a stream bypassed a WrapMiddleware writer (logged once)

	mu         sync.Mutex
	freezeOnce sync.Once // ServeHTTP's first use
	started    bool
	shutdown   bool // Shutdown was called
	ready      chan struct{}

	stopping chan struct{} // closed when Shutdown begins (ShuttingDown)
	stopOnce sync.Once
}

// New returns a Server with cfg's defaults filled in.
func New(cfg Config) *Server {
	if cfg.Addr == "" {
		cfg.Addr = ":8080"
	}
	if cfg.MaxRequestBodySize <= 0 {
		cfg.MaxRequestBodySize = h1.DefaultMaxBodySize
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	customErrors := cfg.ErrorHandler != nil
	if cfg.ErrorHandler == nil {
		cfg.ErrorHandler = DefaultErrorHandler
	}
	s := &Server{
		cfg:          cfg,
		router:       router.New[*Route](),
		logger:       cfg.Logger,
		ready:        make(chan struct{}),
		stopping:     make(chan struct{}),
		customErrors: customErrors,
	}
	s.h1cfg = h1.ServerConfig{
		Limits: h1.Limits{
			MaxURILength:   cfg.MaxURILength,
			MaxHeaderBytes: cfg.MaxHeaderBytes,
			MaxHeaderCount: cfg.MaxHeaderCount,
			MaxBodySize:    cfg.MaxRequestBodySize,
		},
		Handler: s.handler(),
		Logger:  s.logger,
		Active:  &s.activeRequests,
	}
	if cfg.RefusalHeader != nil {
		s.h1cfg.RefusalFields = s.refusalFields
	}
	if cfg.RefusalBody != nil {
		s.h1cfg.RefusalBody = s.refusalBody
	}
	if cfg.AltSvc != "" {
		s.altSvc.Store(&cfg.AltSvc)
	}
	s.ctxs.New = func() any {
		c := &Context{server: s}
		c.header = c.hdrBuf[:0]
		return c
	}
	return s
}

// refusalFields calls Config.RefusalHeader for the protocol layers. Content-Type
// and Content-Length are the server's (its refusals are text/plain); the protocol
// writers drop the other fields they own.
func (s *Server) refusalFields(status int) (fields []httpmsg.Field) {
	if s.cfg.RefusalHeader == nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			if !s.refusalPanicked.Swap(true) { // any client can cause refusals: log once
				s.logger.Error("celeris: RefusalHeader panicked; its fields are left out", "status", status, "panic", p)
			}
			fields = nil
		}
	}()
	for name, values := range s.cfg.RefusalHeader(status) {
		if httpmsg.EqualFold(name, "Content-Type") || httpmsg.EqualFold(name, "Content-Length") {
			continue
		}
		for _, v := range values {
			fields = append(fields, httpmsg.Field{Name: name, Value: v})
		}
	}
	return fields
}

// refuseH2 is the answer to an HTTP/2 preface when h2c is disabled.
func (s *Server) refuseH2() []byte {
	const status = http.StatusHTTPVersionNotSupported
	if ct, body := s.refusalBody(status); ct != "" || body != nil {
		return h1.AppendErrorBody(nil, status, s.refusalFields(status), ct, body)
	}
	return h1.AppendError(nil, &h1.Error{Status: status, Reason: "HTTP/2 is not enabled here"}, s.refusalFields(status))
}

// Start listens on Config.Addr and serves until Shutdown; with Config.TLSAddr it
// serves HTTPS there too (see StartTLS for HTTPS alone). It returns
// http.ErrServerClosed after a Shutdown, or the listen error.
func (s *Server) Start() error { return s.start("", "", false) }

// start serves Config.Addr (plaintext, or TLS when tlsOnly) and Config.TLSAddr.
func (s *Server) start(certFile, keyFile string, tlsOnly bool) error {
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		return http.ErrServerClosed // Shutdown came first
	}
	if s.started {
		s.mu.Unlock()
		return errors.New("celeris: server already started")
	}
	s.started = true
	s.freeze()
	s.pool = work.NewPool(s.cfg.MaxWorkers, 10*time.Second)
	s.h1cfg.Pool = s.pool
	s.configureH2()
	if !s.cfg.HandlersOnWorkers {
		directrun.Calibrate()
		slow := directrun.SlowTicks(cmp.Or(s.cfg.InPlaceThreshold, directrun.DefaultSlow))
		s.h1cfg.SlowTicks, s.h1tls.SlowTicks, s.h2cfg.SlowTicks = slow, slow, slow
	}
	err := s.adopt(tlsOnly) // inherited sockets (activation.go)
	if err == nil {
		err = s.newEngines(certFile, keyFile, tlsOnly)
	}
	if err != nil {
		s.inherit.close()
		s.eng, s.tlsEng, s.transportEngs = nil, nil, nil
		s.pool.Stop()
		s.mu.Unlock()
		return err
	}
	engs := s.engines()
	s.mu.Unlock()
	err = s.runEngines(engs)
	if !errors.Is(err, http.ErrServerClosed) {
		s.pool.Stop() // a failed start: no Shutdown will come for it
	}
	return err
}

// runEngines runs every engine until all have stopped. One that fails to start
// stops the others.
func (s *Server) runEngines(engs []servingEngine) error {
	errc := make(chan error, len(engs))
	for _, e := range engs {
		go func() { errc <- e.Run() }()
	}
	go func() {
		for _, e := range engs {
			if _, err := e.WaitReady(); err != nil {
				return
			}
		}
		close(s.ready)
		s.notifyParent() // a parent process waits for this one to serve (upgrade.go)
	}()
	var first error
	for range engs {
		err := <-errc
		if err != nil && first == nil {
			first = err
			for _, e := range engs {
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					_ = e.Stop(ctx)
				}()
			}
		}
	}
	if first != nil {
		return fmt.Errorf("celeris: %w", first)
	}
	return http.ErrServerClosed
}

// engines lists the engines of a started server (s.mu held).
func (s *Server) engines() []servingEngine {
	var engs []servingEngine
	if s.eng != nil {
		engs = append(engs, s.eng)
	}
	if s.tlsEng != nil {
		engs = append(engs, s.tlsEng)
	}
	return append(engs, s.transportEngs...)
}

// Ready is closed once the server listens (on every address).
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Addr is the address the server listens on (Config.Addr), nil before it is ready.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	eng := s.eng
	s.mu.Unlock()
	if eng == nil {
		return nil
	}
	return eng.Addr()
}

// stopGrace is how long Shutdown gives the engines, past its context's
// deadline, to close the connections left.
const stopGrace = 100 * time.Millisecond

// Shutdown fails the readiness check and waits Config.ShutdownDelay
// (see ReadyHandler), then stops accepting connections, lets in-flight requests finish (idle
// connections close at once, busy ones after their response), then stops the
// engines (plaintext and TLS alike). When ctx ends first, remaining connections
// are closed and ctx's error returned. It first closes ShuttingDown's channel, so
// that long-lived streams (SSE, long polls) can end at once instead of holding
// Shutdown until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.beginShutdownDelay(ctx)
	s.stopOnce.Do(func() { close(s.stopping) }) // streams may end now (ShuttingDown)
	s.mu.Lock()
	engs := s.engines()
	s.shutdown = true // a Start that has not begun yet returns at once
	s.mu.Unlock()
	if len(engs) == 0 {
		return nil
	}
	for _, eng := range engs {
		if _, err := eng.WaitReady(); err != nil {
			return nil
		}
	}
	var werr error
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		open := 0
		for _, eng := range engs {
			open += eng.Drain()
		}
		if open == 0 {
			break
		}
		select {
		case <-ctx.Done():
			werr = ctx.Err()
		case <-t.C:
			continue
		}
		break
	}
	// Stopping closes what is left. It is bounded by ctx: once ctx ended, the
	// engines get stopGrace to close their connections (a socket closes at
	// once) and Shutdown returns; a handler that ignores its cancelled context
	// and holds its loop must not hold the caller past its deadline (Start
	// returns once the engines stopped).
	limit := 5 * time.Second
	if ctx.Err() != nil {
		limit = stopGrace
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer cancel()
	if dl, ok := ctx.Deadline(); ok {
		var c2 context.CancelFunc
		stopCtx, c2 = context.WithDeadline(stopCtx, dl.Add(stopGrace))
		defer c2()
	}
	var err error
	for _, eng := range engs {
		if e := eng.Stop(stopCtx); e != nil && err == nil {
			err = e
		}
	}
	if s.pool != nil {
		s.pool.Stop()
	}
	if werr != nil {
		return werr
	}
	return err
}

// serverHandler is the Server as the protocols see it (httpmsg.Handler). Its
// methods are not part of the Server's public API; the protocols call them
// through the interface, so the bodies live here (a wrapper around Server
// methods would cost a call per request).
type serverHandler Server

var _ httpmsg.Handler = (*serverHandler)(nil)

// handler is s as the protocols' httpmsg.Handler.
func (s *Server) handler() httpmsg.Handler { return (*serverHandler)(s) }

// prepare routes a request (ServeHTTP's path; the protocols call Prepare).
func (s *Server) prepare(req *httpmsg.Request) bool { return (*serverHandler)(s).Prepare(req) }

// serve runs a prepared request (ServeHTTP's path; the protocols call Serve).
func (s *Server) serve(req *httpmsg.Request, w httpmsg.ResponseWriter) {
	(*serverHandler)(s).Serve(req, w)
}

// Prepare routes a request on the event loop (httpmsg.Handler).
func (h *serverHandler) Prepare(req *httpmsg.Request) bool {
	s := (*Server)(h)
	var c *Context
	if sp, ok := req.Spare.(*spareContext); ok {
		c = (*Context)(sp) // left by the previous request of this Request value
		req.Spare = nil
	} else {
		c = s.ctxs.Get().(*Context)
	}
	c.req = req
	req.Route = c
	if s.preFinal != nil {
		req.InPlace = &s.preInPlace
		return false // Pre middleware is user code: it runs on a worker
	}
	s.lookup(c)
	if c.route != nil {
		req.InPlace = &c.route.inPlace
		return c.route.inline && c.req.Method != http.MethodConnect // a tunnel blocks (tunnel.go)
	}
	req.InPlace = &s.otherInPlace
	// The built-in 404 and 405 answers (DefaultErrorHandler's) never block; user
	// middleware or a user error handler might, so they run on a worker like any
	// route that is not Inline.
	return len(s.use) == 0 && s.notFound == nil && s.methodNotAllowed == nil && !s.customErrors
}

// lookup routes c's request.
func (s *Server) lookup(c *Context) {
	c.params.Reset()
	c.route, c.allow = nil, ""
	m, p := c.method(), c.path()
	if m == http.MethodConnect && s.lookupConnect(c, p) {
		return // a tunnel route (xconnect.go)
	}
	r, res, allow := s.router.Lookup(m, p, &c.params)
	switch {
	case res == router.Found:
		c.route = r
	case s.lookupTarget(c, m, p):
		// Not a path, or a method no route has (target.go): off the hot path, as
		// no route matches these.
	case res == router.MethodNotAllowed:
		c.allow = allow
		if m == http.MethodOptions && s.autoOptions != nil {
			c.route = s.autoOptions // 204 with Allow (target.go)
		}
	}
}

// Serve runs the handler of a prepared request (httpmsg.Handler).
func (h *serverHandler) Serve(req *httpmsg.Request, w httpmsg.ResponseWriter) {
	s := (*Server)(h)
	c, _ := req.Route.(*Context)
	if c == nil {
		if m, ok := req.Route.(*movedContext); ok {
			// The second call for an inline route's recorded response, on a
			// worker (moved.go).
			s.finishMoved((*Context)(m), req, w)
			return
		}
		h.Prepare(req)
		c = req.Route.(*Context)
	}
	c.w = w
	if req.TLS != nil {
		s.addAltSvc(c) // transport.go
	}
	if req.Counted { // the protocol counts it (a worker's batch): no atomics here
		s.run(c)
	} else {
		s.activeRequests.Add(1)
		s.run(c)
		s.activeRequests.Add(-1)
	}
	if req.MoveToWorker {
		// An inline handler recorded a response that would wait for the client:
		// the protocol calls Serve again on a worker to send it (moved.go).
		req.Route = (*movedContext)(c)
		return
	}
	req.Route = nil
	c.reset()
	if req.KeepsSpare && req.Spare == nil {
		req.Spare = (*spareContext)(c) // for the next request it carries: no pool round trip
	} else {
		s.ctxs.Put(c)
	}
}

// spareContext is a reset Context left with a Request value for its next request
// (httpmsg.Request.Spare). Its Recycle is not part of Context's API.
type spareContext Context

var _ httpmsg.Spare = (*spareContext)(nil)

// Recycle puts the Context back into its server's pool (httpmsg.Spare).
func (sp *spareContext) Recycle() { sp.server.ctxs.Put((*Context)(sp)) }

func (s *Server) run(c *Context) {
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("celeris: handler panic", "method", c.Method(), "path", c.Path(),
				"panic", p, "stack", string(debug.Stack()))
			if !c.written {
				// Headers set so far stay (a request id set by middleware is
				// worth keeping); the body is replaced.
				c.capture = 0
				answerPanic(c) // text/plain, or a problem when Accept prefers one
			}
		}
	}()
	var err error
	if s.preFinal != nil {
		err = s.preFinal(c)
	} else {
		err = s.dispatch(c)
	}
	if err != nil && !c.errored { // Context.Error may have run it already
		s.cfg.ErrorHandler(c, err)
	}
	if !c.written {
		code := c.status
		if code == 0 {
			code = http.StatusOK
		}
		_ = c.NoContent(code)
	}
	if c.streaming {
		_ = c.w.End(c.trailer) // nil unless SetTrailer was called
	}
}

// dispatch runs the chain of the routed request.
func (s *Server) dispatch(c *Context) error {
	switch {
	case c.route != nil:
		return c.route.final(c)
	case c.allow != "":
		c.SetHeader("Allow", c.allow)
		return s.methodNotAllowedFinal(c)
	default:
		return s.notFoundFinal(c)
	}
}
