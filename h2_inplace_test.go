package celeris

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// HTTP/2 handlers that are not inline run in place where the engine can
// (internal/h2/direct.go): on the loop's goroutine until they block, when the
// engine's watch (or the handler waiting for the loop) moves the loop on.
// These tests hold a handler on such a route and check that everything else
// of the same connection and of others is served meanwhile, on the default
// engine and on the std engine.

// inPlaceEngines runs f on the default engine and on the std engine.
func inPlaceEngines(t *testing.T, f func(t *testing.T)) {
	for _, e := range []Engine{EngineAuto, EngineStd} {
		name := string(e)
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			if e != EngineAuto {
				withEngine(t, e)
			}
			f(t)
		})
	}
}

// h2Peer is a raw HTTP/2 client connection (x/net's Framer).
type h2Peer struct {
	t    *testing.T
	addr string
	nc   net.Conn
	fr   *http2.Framer
	enc  *hpack.Encoder
	blk  bytes.Buffer
	dec  *hpack.Decoder
}

// dialH2 opens a connection and sends the preface with settings.
func dialH2(t *testing.T, addr string, settings ...http2.Setting) *h2Peer {
	t.Helper()
	r := dialRaw(t, addr)
	r.send(http2.ClientPreface)
	p := &h2Peer{t: t, addr: addr, nc: r.c, fr: http2.NewFramer(r.c, r.br)}
	p.enc = hpack.NewEncoder(&p.blk)
	p.dec = hpack.NewDecoder(4096, nil)
	if err := p.fr.WriteSettings(settings...); err != nil {
		t.Fatal(err)
	}
	return p
}

// handshake acknowledges the server's SETTINGS and waits for the ACK of the
// client's: nothing the client sends later makes the server enter the
// connection by itself.
func (p *h2Peer) handshake() {
	p.t.Helper()
	for {
		f, err := p.fr.ReadFrame()
		if err != nil {
			p.t.Fatal(err)
		}
		if sf, ok := f.(*http2.SettingsFrame); ok {
			if sf.IsAck() {
				return
			}
			if err := p.fr.WriteSettingsAck(); err != nil {
				p.t.Fatal(err)
			}
		}
	}
}

// gets sends GETs for paths on streams 1, 3, ... in one write, so that the
// server reads them at once.
func (p *h2Peer) gets(paths ...string) {
	p.t.Helper()
	var buf bytes.Buffer
	fr := p.fr
	p.fr = http2.NewFramer(&buf, nil)
	for i, path := range paths {
		p.get(uint32(1+2*i), path)
	}
	p.fr = fr
	if _, err := p.nc.Write(buf.Bytes()); err != nil {
		p.t.Fatal(err)
	}
}

// get sends a GET for path on stream id, with END_STREAM.
func (p *h2Peer) get(id uint32, path string) { p.request(id, "GET", path, true) }

// request sends a request head on stream id, with END_STREAM when end is set.
func (p *h2Peer) request(id uint32, method, path string, end bool) {
	p.t.Helper()
	p.blk.Reset()
	for _, f := range []hpack.HeaderField{{Name: ":method", Value: method}, {Name: ":scheme", Value: "http"},
		{Name: ":authority", Value: p.addr}, {Name: ":path", Value: path}} {
		_ = p.enc.WriteField(f)
	}
	if err := p.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: p.blk.Bytes(), EndStream: end, EndHeaders: true}); err != nil {
		p.t.Fatal(err)
	}
}

// h2Event is what read reports of one frame of a stream.
type h2Event struct {
	status string // a HEADERS frame's :status
	data   []byte // a DATA frame's payload
	end    bool
}

// read returns the next HEADERS or DATA frame of stream id (other frames and
// streams are skipped; SETTINGS are acknowledged) or fails after d.
func (p *h2Peer) read(id uint32, d time.Duration) h2Event {
	p.t.Helper()
	_ = p.nc.SetReadDeadline(time.Now().Add(d))
	defer func() { _ = p.nc.SetReadDeadline(time.Now().Add(20 * time.Second)) }()
	for {
		f, err := p.fr.ReadFrame()
		if err != nil {
			p.t.Fatalf("stream %d: no frame within %v: %v", id, d, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = p.fr.WriteSettingsAck()
			}
		case *http2.HeadersFrame:
			fields, err := p.dec.DecodeFull(f.HeaderBlockFragment())
			if err != nil {
				p.t.Fatal(err)
			}
			if f.StreamID != id {
				continue
			}
			ev := h2Event{end: f.StreamEnded()}
			for _, hf := range fields {
				if hf.Name == ":status" {
					ev.status = hf.Value
				}
			}
			return ev
		case *http2.DataFrame:
			if f.StreamID == id {
				return h2Event{data: append([]byte(nil), f.Data()...), end: f.StreamEnded()}
			}
		case *http2.GoAwayFrame:
			p.t.Fatalf("stream %d: GOAWAY %v", id, f.ErrCode)
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				p.t.Fatalf("stream %d: RST_STREAM %v", id, f.ErrCode)
			}
		}
	}
}

// response reads stream id's response to its end within d.
func (p *h2Peer) response(id uint32, d time.Duration) (status, body string) {
	p.t.Helper()
	deadline := time.Now().Add(d)
	var b []byte
	for {
		ev := p.read(id, time.Until(deadline))
		if ev.status != "" {
			status = ev.status
		}
		b = append(b, ev.data...)
		if ev.end {
			return status, string(b)
		}
	}
}

// getOther GETs path over a connection of its own (net/http's h2c client) and
// returns the major protocol version and the body.
func getOther(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	resp, err := h2cClient().Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.ProtoMajor, string(b)
}

// inPlaceRoutes registers /block (waits for release), /fast, /empty (204).
func inPlaceRoutes(started chan<- string, release <-chan struct{}) func(s *Server) {
	return func(s *Server) {
		s.GET("/block", func(c *Context) error {
			started <- "block"
			<-release
			return c.String(http.StatusOK, "released")
		})
		s.GET("/fast", func(c *Context) error { return c.String(http.StatusOK, "fast") })
		s.GET("/empty", func(c *Context) error { return c.NoContent(http.StatusNoContent) })
	}
}

// TestH2InPlaceBlockedHandlerServesOthers: while a handler blocks on a channel,
// the other streams of its connection and other connections are answered; it
// answers once released.
func TestH2InPlaceBlockedHandlerServesOthers(t *testing.T) {
	t.Parallel()
	inPlaceEngines(t, func(t *testing.T) {
		started := make(chan string, 4)
		release := make(chan struct{})
		_, addr := startServer(t, Config{}, inPlaceRoutes(started, release))
		p := dialH2(t, addr)
		p.get(1, "/block")
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("/block did not start")
		}
		for i := uint32(0); i < 5; i++ {
			id := 3 + 2*i
			p.get(id, "/fast")
			if st, body := p.response(id, 3*time.Second); st != "200" || body != "fast" {
				t.Fatalf("stream %d beside a blocked handler: %s %q", id, st, body)
			}
		}
		if proto, body := getOther(t, addr, "/fast"); proto != 2 || body != "fast" {
			t.Fatalf("other connection: HTTP/%d %q", proto, body)
		}
		close(release)
		if st, body := p.response(1, 5*time.Second); st != "200" || body != "released" {
			t.Fatalf("/block: %s %q", st, body)
		}
	})
}

// TestH2InPlaceBlockedAfterAnswered: requests read at once run one after
// another in place; the answer of the first goes out within the watch bound
// when the second blocks, though the client sends nothing more, and those
// behind the blocked one are answered.
func TestH2InPlaceBlockedAfterAnswered(t *testing.T) {
	t.Parallel()
	inPlaceEngines(t, func(t *testing.T) {
		started := make(chan string, 4)
		release := make(chan struct{})
		_, addr := startServer(t, Config{}, inPlaceRoutes(started, release))
		p := dialH2(t, addr)
		p.handshake()
		p.gets("/fast", "/block")
		if st, body := p.response(1, 2*time.Second); st != "200" || body != "fast" {
			t.Fatalf("stream 1 before a blocked one: %s %q", st, body)
		}
		// Requests queued behind a blocked one go to workers.
		q := dialH2(t, addr)
		q.handshake()
		q.gets("/block", "/fast", "/fast")
		for _, id := range []uint32{3, 5} {
			if st, body := q.response(id, 2*time.Second); st != "200" || body != "fast" {
				t.Fatalf("stream %d behind a blocked one: %s %q", id, st, body)
			}
		}
		close(release)
		for _, c := range []*h2Peer{p, q} {
			id := uint32(3)
			if c == q {
				id = 1
			}
			if st, body := c.response(id, 5*time.Second); st != "200" || body != "released" {
				t.Fatalf("/block: %s %q", st, body)
			}
		}
	})
}

// TestH2InPlaceFlowControlBlocked: a handler whose response waits for a client
// that grants no window (its writes past the queue bound wait as a worker's)
// stalls neither its connection's other streams nor other connections.
func TestH2InPlaceFlowControlBlocked(t *testing.T) {
	t.Parallel()
	inPlaceEngines(t, func(t *testing.T) {
		wrote := make(chan int, 1)
		_, addr := startServer(t, Config{}, func(s *Server) {
			s.GET("/big", func(c *Context) error {
				w, err := c.Stream(http.StatusOK, "application/octet-stream")
				if err != nil {
					return err
				}
				chunk := make([]byte, 64<<10)
				n := 0
				for ; n < 64; n++ { // 4 MiB: far past what waits unsent
					if _, err := w.Write(chunk); err != nil {
						break
					}
				}
				wrote <- n
				return nil
			})
			s.GET("/empty", func(c *Context) error { return c.NoContent(http.StatusNoContent) })
		})
		p := dialH2(t, addr, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
		p.get(1, "/big")
		if ev := p.read(1, 5*time.Second); ev.status != "200" {
			t.Fatalf("/big: head %+v", ev)
		}
		for i := uint32(0); i < 3; i++ {
			id := 3 + 2*i
			p.get(id, "/empty")
			if st, _ := p.response(id, 3*time.Second); st != "204" {
				t.Fatalf("stream %d beside a window-blocked response: %s", id, st)
			}
		}
		if proto, _ := getOther(t, addr, "/empty"); proto != 2 {
			t.Fatalf("other connection: HTTP/%d", proto)
		}
		select {
		case n := <-wrote:
			t.Fatalf("/big wrote %d chunks with no window", n)
		default:
		}
		// Closing the connection fails the waiting Write.
		p.nc.Close()
		select {
		case <-wrote:
		case <-time.After(10 * time.Second):
			t.Fatal("the blocked writer did not fail when its connection closed")
		}
	})
}

// TestH2InPlaceFlushArrives: what a handler flushed reaches the client while the
// handler still runs (an SSE stream).
func TestH2InPlaceFlushArrives(t *testing.T) {
	t.Parallel()
	inPlaceEngines(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		_, addr := startServer(t, Config{}, func(s *Server) {
			s.GET("/sse", func(c *Context) error {
				w, err := c.Stream(http.StatusOK, "text/event-stream")
				if err != nil {
					return err
				}
				for i := 0; i < 3; i++ {
					if _, err := io.WriteString(w, "data: tick\n\n"); err != nil {
						return err
					}
					if err := w.Flush(); err != nil {
						return err
					}
					if i == 0 {
						<-release // the first event must arrive while this waits
					}
				}
				return nil
			})
		})
		p := dialH2(t, addr)
		p.get(1, "/sse")
		var got []byte
		deadline := time.Now().Add(3 * time.Second)
		for !strings.Contains(string(got), "data: tick") {
			ev := p.read(1, time.Until(deadline))
			got = append(got, ev.data...)
			if ev.end {
				t.Fatalf("stream ended early: %q", got)
			}
		}
	})
}

// TestH2InPlaceResetCancels: a client's RST_STREAM, or its disconnect, cancels
// the context of a handler that blocks where it runs.
func TestH2InPlaceResetCancels(t *testing.T) {
	t.Parallel()
	inPlaceEngines(t, func(t *testing.T) {
		started := make(chan struct{}, 1)
		canceled := make(chan bool, 1)
		_, addr := startServer(t, Config{}, func(s *Server) {
			s.GET("/wait", func(c *Context) error {
				started <- struct{}{}
				canceled <- waitDone(c.Context().Done())
				return nil
			})
		})
		for _, how := range []string{"reset", "disconnect"} {
			p := dialH2(t, addr)
			p.get(1, "/wait")
			select {
			case <-started:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: handler did not start", how)
			}
			if how == "reset" {
				if err := p.fr.WriteRSTStream(1, http2.ErrCodeCancel); err != nil {
					t.Fatal(err)
				}
			} else {
				p.nc.Close()
			}
			if !<-canceled {
				t.Fatalf("%s: the handler's context was not cancelled", how)
			}
		}
	})
}

// TestH2InPlaceTLS: over TLS (h2 by ALPN, net/http's client), a handler blocked
// where it runs leaves the other requests of its connection answered.
func TestH2InPlaceTLS(t *testing.T) {
	t.Parallel()
	started := make(chan string, 4)
	release := make(chan struct{})
	_, _, secure := startTLSServer(t, Config{}, inPlaceRoutes(started, release))
	c := tlsClient(t, true)
	blocked := make(chan string, 1)
	go func() {
		resp, err := c.Get("https://" + secure + "/block")
		if err != nil {
			blocked <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		blocked <- string(b)
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("/block did not start")
	}
	for range 3 {
		var reused bool
		req, _ := http.NewRequest("GET", "https://"+secure+"/fast", nil)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
		}))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 2 || !reused || string(b) != "fast" {
			t.Fatalf("beside a blocked handler: HTTP/%d, same connection %v, %q", resp.ProtoMajor, reused, b)
		}
	}
	close(release)
	select {
	case b := <-blocked:
		if b != "released" {
			t.Fatalf("/block: %q", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("/block did not answer once released")
	}
}
