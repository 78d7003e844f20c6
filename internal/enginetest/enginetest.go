// Package enginetest is the conformance suite every engine passes: it serves
// the real protocols (internal/h1, internal/h2 and internal/ws, chosen by
// internal/protoselect) from the engine under test and talks to it over real
// sockets, with raw TCP clients, x/net's HTTP/2 framer and x/net's WebSocket
// client. Each engine package has a TestConformance that calls Run.
//
// What it checks is the engine's side of the engine-protocol contract
// (internal/httpmsg): pipelined requests answered in order; a half-close with
// answers owed; a client that does not read held to the output bound (the
// handler waits, the server does not buffer the answers whole); hijack; a
// graceful drain; the read-header and idle deadlines; reading paused while the
// protocol is behind and resumed after; many idle connections; the h2c upgrade
// and HTTP/2 with prior knowledge; a switch to WebSocket; a handler that blocks
// without holding up other connections.
package enginetest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/h1"
	"github.com/celeris-dev/celeris/internal/h2"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/protoselect"
	"github.com/celeris-dev/celeris/internal/work"
)

// Engine is what the suite needs of an engine.
type Engine interface {
	Run() error
	WaitReady() (net.Addr, error)
	Drain() int
	Stop(ctx context.Context) error
	OpenConnections() int
}

// Options are the settings the suite gives an engine; the factory maps them
// onto the engine's own Config and listens on Addr.
type Options struct {
	Addr              string // always 127.0.0.1:0
	Protocols         protoselect.Protocols
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	// MaxBufferedInput bounds the input held for a protocol that does not
	// consume it (the engine pauses reading past it); 0: the engine's default.
	MaxBufferedInput int
}

// Factory builds an engine (not started) from o.
type Factory func(o Options) Engine

// Run runs every conformance case against the engines newEngine builds, each
// case on an engine of its own.
func Run(t *testing.T, newEngine Factory) {
	cases := []struct {
		name string
		f    func(t *testing.T, s *server)
		o    Options
	}{
		{name: "Pipelining", f: testPipelining},
		{name: "HalfCloseAnswersOwed", f: testHalfClose},
		{name: "NonReadingClientHeldToOutputBound", f: testOutputBound},
		{name: "SlowReaderStreamed", f: testSlowStream},
		{name: "Hijack", f: testHijack},
		{name: "GracefulDrain", f: testDrain},
		{name: "IdleTimeout", f: testIdleTimeout, o: Options{IdleTimeout: 300 * time.Millisecond}},
		{name: "ReadHeaderTimeout", f: testReadHeaderTimeout, o: Options{ReadHeaderTimeout: 300 * time.Millisecond}},
		{name: "PauseAndResumeReading", f: testPauseResume, o: Options{MaxBufferedInput: 64 << 10}},
		{name: "ManyIdleConnections", f: testManyIdle},
		{name: "H2CUpgrade", f: testH2CUpgrade},
		{name: "H2PriorKnowledge", f: testH2PriorKnowledge},
		{name: "WebSocketSwitch", f: testWebSocket},
		{name: "BlockingHandler", f: testBlockingHandler},
		{name: "StopClosesConnections", f: testStop},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, newEngine, tc.o)
			tc.f(t, s)
		})
	}
}

// server is one engine under test with its protocols and handler.
type server struct {
	eng  Engine
	addr string
	h    *handler
	pool *work.Pool
	errc chan error
}

func start(t *testing.T, newEngine Factory, o Options) *server {
	t.Helper()
	s := &server{h: newHandler(), pool: work.NewPool(0, 10*time.Second), errc: make(chan error, 1)}
	s.h.pool = s.pool
	h1cfg := &h1.ServerConfig{
		Limits:    h1.Limits{MaxBodySize: 1 << 30},
		Handler:   s.h,
		Pool:      s.pool,
		EnableH2C: true,
	}
	h2cfg := &h2.Config{}
	o.Addr = "127.0.0.1:0"
	o.Protocols = protoselect.Protocols{
		NewH1: func(c httpmsg.Conn) httpmsg.Proto { return h1.NewConn(c, h1cfg) },
		NewH2: func(c httpmsg.Conn) httpmsg.Proto { return h2.NewConn(c, s.h, s.pool, h2cfg) },
		Upgrade: func(c httpmsg.Conn, req *httpmsg.Request, settings []byte) (httpmsg.Proto, error) {
			return h2.NewUpgradedConn(c, s.h, s.pool, h2cfg, settings, req)
		},
	}
	s.eng = newEngine(o)
	go func() { s.errc <- s.eng.Run() }()
	a, err := s.eng.WaitReady()
	if err != nil {
		t.Fatalf("engine did not start: %v", err)
	}
	s.addr = a.String()
	t.Cleanup(func() {
		s.h.release() // no handler stays blocked
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.eng.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
		select {
		case <-s.errc:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after Stop")
		}
		s.pool.Stop()
	})
	return s
}

// dial opens a connection to s with a deadline for the whole case.
func (s *server) dial(t *testing.T) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	return c.(*net.TCPConn)
}
