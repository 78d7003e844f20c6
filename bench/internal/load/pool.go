package load

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/catalog"
	"github.com/celeris-dev/celeris/bench/internal/h1client"
	"github.com/celeris-dev/celeris/bench/internal/h2client"
	"github.com/celeris-dev/celeris/bench/internal/h3client"
)

// Target is what a pool of clients sends.
type Target struct {
	Proto  string // catalog.H1, H2C, H1TLS, H2TLS or H3
	Addr   string // host:port on the loopback
	Method string
	Path   string
	Body   []byte
	// Pipeline is the HTTP/1.1 pipelining depth (requests written at once).
	Pipeline int
	// Streams is how many clients share one HTTP/2 or HTTP/3 connection.
	Streams int
	// Message is what each WebSocket connection sends (binary) and expects
	// back, on Path.
	Message []byte
}

const (
	dialTimeout = 2 * time.Second
	// retryPause keeps a worker whose server is gone from spinning.
	retryPause = 10 * time.Millisecond
	// stopTimeout bounds Stop even if a worker is stuck.
	stopTimeout = 5 * time.Second
)

var errStopped = errors.New("load: pool stopped")

// Pool runs clients: goroutines that each send the target request in a loop
// and record every answer. For h1 a client owns one connection (with
// Pipeline requests in flight); for h2c a client is one stream at a time and
// Streams clients share a connection. Grow and Stop are called by one
// controlling goroutine.
type Pool struct {
	t   Target
	rec *Recorder

	stopped atomic.Bool
	wg      sync.WaitGroup
	n       int              // clients started; owned by the controller
	groups  []*h2group       // h2c connections, Streams clients each
	h3      []*h3client.Conn // h3 connections, Streams clients each

	mu    sync.Mutex
	conns map[io.Closer]struct{} // live connections, closed by Stop; guarded by mu
}

// NewPool returns a pool with no clients.
func NewPool(t Target, rec *Recorder) *Pool {
	t.Pipeline = max(t.Pipeline, 1)
	t.Streams = max(t.Streams, 1)
	return &Pool{t: t, rec: rec, conns: map[io.Closer]struct{}{}}
}

// Size returns the number of clients started.
func (p *Pool) Size() int { return p.n }

// Grow starts clients until there are n.
func (p *Pool) Grow(n int) {
	for ; p.n < n; p.n++ {
		p.wg.Add(1)
		if p.t.Proto == catalog.H3 {
			gi := p.n / p.t.Streams
			if gi == len(p.h3) {
				c := h3client.New(p.t.Addr, dialTimeout)
				if !p.track(c) {
					c.Close()
					p.wg.Done()
					return
				}
				p.h3 = append(p.h3, c)
			}
			go p.runH3(p.n, p.h3[gi])
		} else if catalog.IsH2(p.t.Proto) {
			gi := p.n / p.t.Streams
			if gi == len(p.groups) {
				p.groups = append(p.groups, &h2group{})
			}
			go p.runH2(p.n, p.groups[gi])
		} else {
			go p.runH1(p.n)
		}
	}
}

// Stop ends every client: in-flight requests are abandoned, not counted.
// It reports whether every client ended within stopTimeout.
func (p *Pool) Stop() bool {
	p.stopped.Store(true)
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(stopTimeout):
		return false
	}
}

// track registers a live connection; it refuses (and the caller closes the
// connection) once the pool is stopping.
func (p *Pool) track(c io.Closer) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped.Load() {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Pool) untrack(c io.Closer) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// fail counts an error unless the pool is stopping (then failures are ours).
func (p *Pool) fail(id int) {
	if !p.stopped.Load() {
		p.rec.Fail(id)
	}
}

func (p *Pool) runH1(id int) {
	defer p.wg.Done()
	req := h1client.Request{Method: p.t.Method, Path: p.t.Path, Host: p.t.Addr, Body: p.t.Body}
	done := func(resp *h1client.Response, latency time.Duration) {
		p.rec.Done(id, resp.Status, latency)
	}
	dial := h1client.Dial
	if catalog.IsTLS(p.t.Proto) {
		dial = h1client.DialTLS
	}
	var c *h1client.Conn
	for !p.stopped.Load() {
		if c == nil {
			nc, err := dial(p.t.Addr, req, p.t.Pipeline, dialTimeout, false)
			if err != nil {
				p.fail(id)
				time.Sleep(retryPause)
				continue
			}
			if !p.track(nc) {
				nc.Close()
				return
			}
			c = nc
		}
		if err := c.RoundTrip(done); err != nil {
			p.untrack(c)
			c = nil
			if err != h1client.ErrCloseAfterResponse {
				p.fail(id)
			}
		}
	}
	if c != nil {
		p.untrack(c)
	}
}

// h2group is one HTTP/2 connection shared by Streams clients, dialled again
// by the first client that finds it dead.
type h2group struct {
	mu   sync.Mutex
	conn *h2client.Conn // guarded by mu
}

func (g *h2group) get(p *Pool) (*h2client.Conn, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.conn != nil && g.conn.Err() == nil {
		return g.conn, nil
	}
	if g.conn != nil {
		p.untrack(g.conn)
		g.conn = nil
	}
	if p.stopped.Load() {
		return nil, errStopped
	}
	c, err := h2client.Dial(p.t.Addr, h2client.Options{Timeout: dialTimeout, TLS: catalog.IsTLS(p.t.Proto)})
	if err != nil {
		return nil, err
	}
	if !p.track(c) {
		c.Close()
		return nil, errStopped
	}
	g.conn = c
	return c, nil
}

func (p *Pool) runH2(id int, g *h2group) {
	defer p.wg.Done()
	req := h2client.Request{Method: p.t.Method, Path: p.t.Path, Authority: p.t.Addr, Body: p.t.Body}
	for !p.stopped.Load() {
		c, err := g.get(p)
		if err != nil {
			p.fail(id)
			time.Sleep(retryPause)
			continue
		}
		start := time.Now()
		resp, err := c.Do(&req)
		if err != nil {
			// A dead connection is dialled again by the next get.
			p.fail(id)
			continue
		}
		p.rec.Done(id, resp.Status, time.Since(start))
	}
}

// runH3 is one client of an HTTP/3 connection (h3client dials it again when
// it died); Stop closes the connection, which ends the request in flight.
func (p *Pool) runH3(id int, c *h3client.Conn) {
	defer p.wg.Done()
	ctx := context.Background()
	for !p.stopped.Load() {
		start := time.Now()
		resp, err := c.Do(ctx, p.t.Method, p.t.Path, p.t.Body, false)
		if err != nil {
			p.fail(id)
			if !p.stopped.Load() {
				time.Sleep(retryPause)
			}
			continue
		}
		p.rec.Done(id, resp.Status, time.Since(start))
	}
}
