// Package demo is the Celeris demo server that cmd/demo runs: the routes of
// ../../README.md, over HTTP/1.1 and h2c on one port, and with -tls-addr over HTTPS
// (h2 and HTTP/1.1 by ALPN) on another, plus HTTP/3 on that port number over UDP
// when the command gives it the means (cmd/demo is a module of its own, so that
// the core module does not require quic-go). It is the target of the benchmark
// suite and of external conformance and load checks, so its routes are a stable
// contract. Its tests run with the core module's (go test ./... at the root).
package demo

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/celeris-dev/celeris/middleware/compress"
	"github.com/celeris-dev/celeris/middleware/cors"
	"github.com/celeris-dev/celeris/middleware/metrics"
	"github.com/celeris-dev/celeris/middleware/requestid"
)

const (
	maxUpload   = 2 << 30 // /upload streams: the body is counted, never buffered
	maxDownload = 64 << 20
	maxSleepMS  = 10000
	maxChunks   = 65536
)

// Main runs the demo server with the command line's flags until SIGINT or
// SIGTERM. enableH3, when not nil, is called with the server before it starts
// when -tls-addr is set and -h3 is on (the default): cmd/demo passes one that
// serves HTTP/3 on UDP at the TLS port, whose TLS responses then advertise it
// with Alt-Svc.
func Main(enableH3 func(s *celeris.Server)) {
	addr := flag.String("addr", ":8080", "listen address")
	inline := flag.Bool("inline", false, "run /bench, /json and /users/:id/posts/:postId inline on the event loops")
	workers := flag.Bool("workers", false, "run every handler that is not inline on a worker (Config.HandlersOnWorkers; default: in place first, on workers once its route was seen to wait)")
	inPlaceThreshold := flag.Duration("inplace-threshold", 0, "how long a handler may hold its loop in place before the run counts as slow (Config.InPlaceThreshold; 0: 20µs)")
	loops := flag.Int("loops", 0, "event loops (0: one per CPU)")
	bare := flag.Bool("bare", false, "benchmark mode: the routes without the demo's middleware (request id, CORS, metrics, /json compression) and without /metrics, like the peers of the benchmark suite")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file until shutdown")
	memprofile := flag.String("memprofile", "", "write a heap profile to this file at shutdown")
	engine := flag.String("engine", "", "engine of the plaintext listener: epoll (Linux), gnet or std (default: epoll on Linux, std elsewhere)")
	tlsAddr := flag.String("tls-addr", "", "also serve every route over TLS on this address (h2 and http/1.1 by ALPN)")
	tlsCert := flag.String("tls-cert", "", "PEM certificate chain for -tls-addr (default: a self-signed certificate for localhost and 127.0.0.1, made at start)")
	tlsKey := flag.String("tls-key", "", "PEM private key of -tls-cert")
	h3 := flag.Bool("h3", true, "with -tls-addr, also serve HTTP/3 on UDP at the same port (TLS responses advertise it with Alt-Svc)")
	flag.Parse()

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}

	if stream, datagram := celeris.InheritedSockets(); *tlsAddr == "" && (stream > 1 || datagram > 0) {
		// Socket activation handed over a TLS or HTTP/3 socket: serve TLS (on
		// the inherited listener, else on a port of the system's choosing).
		*tlsAddr = ":0"
	}
	s, err := newServerWith(options{addr: *addr, loops: *loops, inline: *inline, bare: *bare, workers: *workers, inPlaceThreshold: *inPlaceThreshold,
		engine: *engine, tlsAddr: *tlsAddr, tlsCert: *tlsCert, tlsKey: *tlsKey})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *h3 && *tlsAddr != "" && enableH3 != nil {
		enableH3(s)
	}
	go func() {
		<-s.Ready()
		args := []any{"addr", s.Addr().String(), "inline", *inline, "bare", *bare}
		if a := s.TLSAddr(); a != nil {
			args = append(args, "tls_addr", a.String())
		}
		slog.Info("demo: listening", args...)
	}()
	// SIGINT or SIGTERM: refuse new connections, let in-flight requests finish.
	// SIGHUP: start the program again on the same sockets and, once it serves,
	// drain this process (celeris.Server.Upgrade).
	err = s.StartGraceful(15 * time.Second)
	if *memprofile != "" {
		if f, ferr := os.Create(*memprofile); ferr == nil {
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
			_ = f.Close()
		}
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// NewTLSServer builds the demo server (its middleware and routes) on addr and,
// over TLS with a self-signed certificate, on tlsAddr: for the tests of
// cmd/demo, which add HTTP/3 to it.
func NewTLSServer(addr, tlsAddr string) (*celeris.Server, error) {
	return newServerWith(options{addr: addr, tlsAddr: tlsAddr, loops: 2})
}

// newServer builds the demo server with its middleware and routes; bare leaves
// the middleware and /metrics out (a benchmark mode, not the contract).
func newServer(addr string, loops int, inline, bare bool) *celeris.Server {
	s, _ := newServerWith(options{addr: addr, loops: loops, inline: inline, bare: bare})
	return s
}

// options are the demo's flags.
type options struct {
	addr                     string
	loops                    int
	inline, bare, workers    bool
	inPlaceThreshold         time.Duration
	engine                   string // "", "gnet", "epoll" or "std"
	tlsAddr, tlsCert, tlsKey string
}

// newServerWith builds the demo server for o; it fails only on a TLS setup error.
func newServerWith(o options) (*celeris.Server, error) {
	cfg := celeris.Config{
		Addr:               o.addr,
		EventLoops:         o.loops,
		HandlersOnWorkers:  o.workers,
		InPlaceThreshold:   o.inPlaceThreshold,
		MaxRequestBodySize: maxUpload,
		Engine:             celeris.Engine(o.engine),
		TLSAddr:            o.tlsAddr,
	}
	bare, inline := o.bare, o.inline
	if o.tlsAddr != "" {
		if err := configureTLS(&cfg, o.tlsCert, o.tlsKey); err != nil {
			return nil, err
		}
	}
	if !bare {
		// Requests refused before routing (malformed, over a limit) get an id too.
		cfg.RefusalHeader = requestid.RefusalHeader
	}
	s := celeris.New(cfg)
	if bare {
		register(s, inline, false)
		return s, nil
	}
	m := metrics.New(metrics.Config{})
	// Every response carries X-Request-ID; CORS preflights are answered before
	// routing reaches a 405.
	s.Use(
		requestid.New(requestid.Config{ContextKey: "-"}),
		cors.New(cors.Config{}),
		m.Middleware(),
	)
	register(s, inline, true)
	s.GET("/metrics", m.Handler(s))
	for _, f := range extensions {
		f(s)
	}
	return s, nil
}

// configureTLS gives cfg the certificate of -tls-cert and -tls-key, or without
// them a self-signed one for localhost and 127.0.0.1, whose SHA-256 fingerprint
// is logged so that it can be compared with what a browser shows.
func configureTLS(cfg *celeris.Config, certFile, keyFile string) error {
	if certFile != "" || keyFile != "" {
		if certFile == "" || keyFile == "" {
			return fmt.Errorf("demo: -tls-cert and -tls-key go together")
		}
		cfg.TLSCertFile, cfg.TLSKeyFile = certFile, keyFile
		return nil
	}
	cert, err := selfcert.New("localhost", "127.0.0.1", "::1")
	if err != nil {
		return fmt.Errorf("demo: self-signed certificate: %w", err)
	}
	cfg.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert.TLS}}
	slog.Info("demo: self-signed TLS certificate for localhost, 127.0.0.1 and ::1", "sha256", cert.Fingerprint)
	return nil
}

type message struct {
	Message string `json:"message"`
}

// zeros is what /download sends: a body of up to its size goes out as one complete
// response (Blob copies it, as a body that small is copied whole); a larger one is
// streamed from this one buffer a piece at a time, never built in memory.
var zeros [64 << 10]byte

// register installs the demo routes. With inline, the three benchmark routes run on
// the event loops; with gzip, /json compresses when the client accepts it, with
// gzip and the codings registered with the compress middleware (cmd/demo adds
// zstd and br).
func register(s *celeris.Server, inline, gzip bool) {
	var jsonMW []celeris.MiddlewareFunc
	if gzip {
		jsonMW = append(jsonMW, compress.New(compress.Config{MinLength: -1}))
	}
	hot := []*celeris.Route{
		s.GET("/bench", func(c *celeris.Context) error {
			return c.String(http.StatusOK, "OK")
		}),
		s.GET("/json", func(c *celeris.Context) error {
			return c.JSON(http.StatusOK, message{Message: "Hello, World!"})
		}, jsonMW...),
		s.GET("/users/:id/posts/:postId", func(c *celeris.Context) error {
			b := c.Buffer() // the body without an allocation per request
			b.WriteString("user=")
			b.WriteString(c.Param("id"))
			b.WriteString(" post=")
			b.WriteString(c.Param("postId"))
			return c.Blob(http.StatusOK, "text/plain; charset=utf-8", b.Bytes())
		}),
	}
	if inline {
		for _, r := range hot {
			r.Inline()
		}
	}
	registerWeb(s)
	s.POST("/upload", func(c *celeris.Context) error {
		n, err := io.Copy(io.Discard, c.BodyReader())
		if err != nil {
			return err
		}
		return c.String(http.StatusOK, strconv.FormatInt(n, 10))
	})
	s.GET("/download", func(c *celeris.Context) error {
		n, err := strconv.Atoi(c.Query("size"))
		if err != nil || n < 0 || n > maxDownload {
			return celeris.NewHTTPError(http.StatusBadRequest, "size must be an integer from 0 to 67108864")
		}
		if n <= len(zeros) {
			return c.Blob(http.StatusOK, "application/octet-stream", zeros[:n])
		}
		w, err := c.StreamLength(http.StatusOK, "application/octet-stream", int64(n))
		if err != nil || c.Method() == http.MethodHead {
			return err
		}
		for n > 0 {
			k, err := w.Write(zeros[:min(n, len(zeros))])
			if err != nil {
				return err
			}
			n -= k
		}
		return nil
	})
	s.GET("/slow", func(c *celeris.Context) error {
		ms, err := strconv.Atoi(c.Query("ms"))
		if err != nil || ms < 0 || ms > maxSleepMS {
			return celeris.NewHTTPError(http.StatusBadRequest, "ms must be an integer from 0 to 10000")
		}
		// A real handler watches its request's context: a client that leaves (or a
		// shutdown past its deadline) ends the wait at once, and the connection's
		// descriptor with it.
		t := time.NewTimer(time.Duration(ms) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return c.String(http.StatusOK, "OK")
		case <-c.Context().Done():
			return celeris.NewHTTPError(http.StatusServiceUnavailable, "request cancelled")
		}
	})
	s.GET("/panic", func(c *celeris.Context) error {
		panic("demo: /panic was requested")
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "hello from net/http")
	})
	s.Any("/nethttp/*rest", celeris.Adapt(http.StripPrefix("/nethttp", mux)))
	s.GET("/sse", func(c *celeris.Context) error {
		sse, err := c.SSE()
		if err != nil {
			return err
		}
		for i := 1; i <= 5; i++ {
			if i > 1 {
				select {
				case <-c.Context().Done():
					return nil
				case <-c.ShuttingDown(): // graceful shutdown need not wait for the stream
					return nil
				case <-time.After(100 * time.Millisecond):
				}
			}
			if err := sse.Send(celeris.Event{ID: strconv.Itoa(i), Event: "tick", Data: "event " + strconv.Itoa(i)}); err != nil {
				return err
			}
		}
		return nil
	})
	s.GET("/stream", func(c *celeris.Context) error {
		n, err := strconv.Atoi(c.Query("n"))
		if err != nil || n < 0 || n > maxChunks {
			return celeris.NewHTTPError(http.StatusBadRequest, "n must be an integer from 0 to 65536")
		}
		w, err := c.Stream(http.StatusOK, "application/octet-stream")
		if err != nil {
			return err
		}
		chunk := make([]byte, 1024)
		for i := range chunk {
			chunk[i] = 'a' + byte(i%26)
		}
		for i := 0; i < n; i++ {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
		return nil
	})
}
