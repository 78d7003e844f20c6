package conncore

import (
	"crypto/tls"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/protoselect"
)

// fakeConn is the engine side: it records what the core and protocols ask.
type fakeConn struct {
	core *Core
	out  []byte
}

func (c *fakeConn) Write(b []byte)       { c.out = append(c.out, b...) }
func (c *fakeConn) Wake()                {}
func (c *fakeConn) Close()               { c.core.Close() }
func (c *fakeConn) RemoteAddr() net.Addr { return &net.TCPAddr{} }

// script is a protocol whose answers the test sets.
type script struct {
	take      int // bytes OnData consumes per call; -1: all
	dataErr   error
	wakeErr   error
	busy      bool
	awaiting  bool
	owed      bool // InputEnded's answer
	level     int  // DrainLevel
	drains    int
	aborted   int
	closedErr error
	closes    int
	fed       []byte
	next      httpmsg.Proto // TakeSwitch's
	flushes   []int         // AfterFlush's arguments
}

func (p *script) OnData(in []byte) (int, error) {
	n := len(in)
	if p.take >= 0 {
		n = min(n, p.take)
	}
	p.fed = append(p.fed, in[:n]...)
	return n, p.dataErr
}
func (p *script) OnWake() error                           { return p.wakeErr }
func (p *script) OnClose(err error)                       { p.closes++; p.closedErr = err }
func (p *script) Busy() bool                              { return p.busy }
func (p *script) AwaitingBody() bool                      { return p.awaiting }
func (p *script) AbortBody()                              { p.aborted++ }
func (p *script) InputEnded() bool                        { return p.owed }
func (p *script) DrainLevel() int                         { return p.level }
func (p *script) AfterFlush(outbound int)                 { p.flushes = append(p.flushes, outbound) }
func (p *script) Drain()                                  { p.drains++ }
func (p *script) TakeSwitch() httpmsg.Proto               { n := p.next; p.next = nil; return n }
func (p *script) TakeUpgrade() (*httpmsg.Request, []byte) { return nil, nil }

// plain is a protocol with none of the optional methods (as HTTP/2 has no
// InputEnder and a refused connection has no Drainer).
type plain struct{ busy bool }

func (plain) OnData(in []byte) (int, error) { return len(in), nil }
func (plain) OnWake() error                 { return nil }
func (plain) OnClose(error)                 {}
func (p plain) Busy() bool                  { return p.busy }

var to = Timeouts{ReadHeader: 10 * time.Second, Idle: 60 * time.Second}

// newCore returns a core whose protocol is p (chosen on the first Feed).
func newCore(p httpmsg.Proto) (*Core, *fakeConn) {
	fc := &fakeConn{}
	protos := &protoselect.Protocols{NewH1: func(httpmsg.Conn) httpmsg.Proto { return p }}
	fc.core = New(fc, protos, to)
	return fc.core, fc
}

func TestFeed(t *testing.T) {
	t.Run("the HTTP/2 preface's prefix waits for more", func(t *testing.T) {
		c, _ := newCore(&script{take: -1})
		if n := c.Feed([]byte("PRI * HT"), 1); n != 0 || c.Proto() != nil {
			t.Fatalf("consumed %d, proto %v", n, c.Proto())
		}
	})
	t.Run("HTTP/2 off: the preface is refused and the connection closes", func(t *testing.T) {
		c, fc := newCore(&script{take: -1})
		c.Feed(protoselect.Preface, 1)
		if !c.Closing() || len(fc.out) == 0 {
			t.Fatalf("closing %v, answer %q", c.Closing(), fc.out)
		}
	})
	t.Run("partial consumption stops the feed", func(t *testing.T) {
		p := &script{take: 3}
		c, _ := newCore(p)
		if n := c.Feed([]byte("GET / HTTP/1.1"), 5); n != 3 || string(p.fed) != "GET" {
			t.Fatalf("consumed %d, fed %q", n, p.fed)
		}
		if c.lastProgress != 5 {
			t.Fatalf("progress dated %d, want 5", c.lastProgress)
		}
	})
	t.Run("a protocol switch hands the rest to the next protocol", func(t *testing.T) {
		next := &script{take: -1}
		p := &script{take: 4, dataErr: httpmsg.ErrUpgrade, next: next}
		c, _ := newCore(p)
		if n := c.Feed([]byte("head+rest"), 1); n != 9 {
			t.Fatalf("consumed %d, want 9", n)
		}
		if c.Proto() != next || string(next.fed) != "+rest" {
			t.Fatalf("next protocol fed %q", next.fed)
		}
	})
	t.Run("ErrUpgrade with nothing to switch to closes", func(t *testing.T) {
		c, _ := newCore(&script{take: -1, dataErr: httpmsg.ErrUpgrade})
		c.Feed([]byte("x"), 1)
		if !errors.Is(c.Err(), httpmsg.ErrUpgrade) || !c.Closing() {
			t.Fatalf("err %v", c.Err())
		}
	})
	t.Run("an error closes and stops feeding", func(t *testing.T) {
		boom := errors.New("boom")
		c, _ := newCore(&script{take: 1, dataErr: boom})
		if n := c.Feed([]byte("abc"), 1); n != 1 || c.Err() != boom {
			t.Fatalf("consumed %d, err %v", n, c.Err())
		}
		if n := c.Feed([]byte("bc"), 1); n != 0 {
			t.Fatalf("fed %d bytes after the error", n)
		}
	})
}

func TestWakeDrainsOnce(t *testing.T) {
	for _, tc := range []struct {
		name      string
		proto     httpmsg.Proto
		drains    int
		closing   bool
		chooseNil bool
	}{
		{name: "a Drainer is told once", proto: &script{take: -1, busy: true}, drains: 1},
		{name: "an idle protocol without Drainer closes", proto: plain{}, closing: true},
		{name: "a busy protocol without Drainer finishes first", proto: plain{busy: true}},
		{name: "no protocol yet: close", chooseNil: true, closing: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newCore(tc.proto)
			if !tc.chooseNil {
				c.Feed([]byte("x"), 1)
			}
			c.AskDrain()
			c.Wake()
			c.Wake()
			if p, ok := tc.proto.(*script); ok && p.drains != tc.drains {
				t.Fatalf("Drain called %d times, want %d", p.drains, tc.drains)
			}
			if c.Closing() != tc.closing {
				t.Fatalf("closing %v, want %v", c.Closing(), tc.closing)
			}
		})
	}
}

func TestEndOfInput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		proto  httpmsg.Proto
		chosen bool
		unsent int
		want   EndAction
	}{
		{name: "no protocol yet", proto: plain{}, want: EndClose},
		{name: "answers owed (HTTP/1.1 with a handler running)", proto: &script{take: -1, owed: true}, chosen: true, want: EndServe},
		{name: "nothing owed, nothing unsent", proto: &script{take: -1}, chosen: true, want: EndClose},
		{name: "nothing owed, output unsent", proto: &script{take: -1}, chosen: true, unsent: 10, want: EndFlush},
		{name: "no InputEnder (HTTP/2), output unsent", proto: plain{busy: true}, chosen: true, unsent: 10, want: EndFlush},
		{name: "no InputEnder (HTTP/2), nothing unsent", proto: plain{busy: true}, chosen: true, want: EndClose},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newCore(tc.proto)
			if tc.chosen {
				c.Feed([]byte("x"), 1)
			}
			if got := c.EndOfInput(tc.unsent); got != tc.want {
				t.Fatalf("EndOfInput = %d, want %d", got, tc.want)
			}
			if c.Linger() {
				t.Fatal("a connection whose input ended lingers")
			}
		})
	}
}

func TestDone(t *testing.T) {
	for _, tc := range []struct {
		name               string
		busy, awaiting     bool
		inputLeft, stalled bool
		want               bool
		aborted            int
	}{
		{name: "handler still runs", busy: true, want: false},
		{name: "served everything", want: true},
		{name: "input left, held back by queued output", inputLeft: true, stalled: true, want: false},
		{name: "input left the protocol cannot use", inputLeft: true, want: true},
		{name: "input left while a handler runs", inputLeft: true, busy: true, want: false},
		{name: "a streamed body whose rest cannot come is aborted", busy: true, awaiting: true, want: false, aborted: 1},
		{name: "a streamed body with input left is not aborted yet", busy: true, awaiting: true, inputLeft: true, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &script{take: -1, owed: true}
			c, _ := newCore(p)
			c.Feed([]byte("x"), 1)
			c.EndOfInput(0)
			p.busy, p.awaiting = tc.busy, tc.awaiting
			if got := c.Done(tc.inputLeft, tc.stalled); got != tc.want {
				t.Fatalf("Done = %v, want %v", got, tc.want)
			}
			if p.aborted != tc.aborted {
				t.Fatalf("AbortBody called %d times, want %d", p.aborted, tc.aborted)
			}
		})
	}
}

func TestDeadline(t *testing.T) {
	const s = int64(time.Second)
	type step struct {
		now           int64
		in, out       int
		busy, waiting bool
		progressAt    int64 // Feed at this time first (0: none)
		undated       bool  // Feed without a time first
		want          int64
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{name: "idle: the idle timeout from now", steps: []step{{now: 5 * s, want: 65 * s}, {now: 7 * s, want: 67 * s}}},
		{name: "partial head: from when it began, however it trickles", steps: []step{
			{now: 1 * s, in: 10, want: 11 * s}, {now: 5 * s, in: 20, want: 11 * s}, {now: 6 * s, want: 66 * s}, {now: 7 * s, in: 1, want: 17 * s}}},
		{name: "a handler runs: none", steps: []step{{now: 1 * s, in: 10, busy: true, want: 0}}},
		{name: "a handler waits for the body: the client must progress", steps: []step{
			{now: 1 * s, busy: true, waiting: true, progressAt: 1 * s, want: 61 * s}, {now: 30 * s, busy: true, waiting: true, want: 61 * s},
			{now: 40 * s, busy: true, waiting: true, progressAt: 40 * s, want: 100 * s}}},
		{name: "output unsent: progress within the idle timeout", steps: []step{
			{now: 1 * s, out: 100, want: 61 * s}, {now: 10 * s, out: 100, want: 61 * s}, {now: 20 * s, out: 50, want: 80 * s},
			{now: 30 * s, out: 80, want: 80 * s}, {now: 40 * s, want: 100 * s}}},
		{name: "progress fed without a time: dated by the next deadline", steps: []step{
			{now: 1 * s, busy: true, waiting: true, progressAt: 1 * s, want: 61 * s},
			{now: 50 * s, busy: true, waiting: true, undated: true, want: 110 * s},
			{now: 70 * s, busy: true, waiting: true, want: 110 * s},
			{now: 80 * s, out: 10, undated: true, want: 140 * s}, // dated although the output rule answers
			{now: 90 * s, busy: true, waiting: true, want: 140 * s}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &script{take: -1}
			c, _ := newCore(p)
			c.Feed([]byte("x"), 0)
			c.lastProgress = 0
			for i, st := range tc.steps {
				p.busy, p.awaiting = st.busy, st.waiting
				if st.progressAt != 0 {
					c.Feed([]byte("b"), st.progressAt)
				}
				if st.undated {
					c.Feed([]byte("b"), 0)
				}
				if got := c.Deadline(st.now, st.in, st.out); got != st.want {
					t.Fatalf("step %d: deadline %ds, want %ds", i, got/s, st.want/s)
				}
			}
		})
	}
}

func TestFlushedWakesDrainWaiter(t *testing.T) {
	for _, tc := range []struct {
		level, outbound int
		want            bool
	}{
		{level: -1, outbound: 0, want: false},
		{level: 100, outbound: 150, want: false},
		{level: 100, outbound: 100, want: true},
		{level: 0, outbound: 0, want: true},
	} {
		p := &script{take: -1, level: tc.level}
		c, _ := newCore(p)
		c.Feed([]byte("x"), 1)
		if got := c.Flushed(tc.outbound); got != tc.want {
			t.Errorf("level %d, outbound %d: wake %v, want %v", tc.level, tc.outbound, got, tc.want)
		}
	}
}

func TestDrainLevel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		proto  httpmsg.Proto
		feed   bool // choose the protocol first
		closed bool // Closed before asking
		want   int
	}{
		{name: "no protocol yet", proto: &script{take: -1, level: 100}, want: -1},
		{name: "waits", proto: &script{take: -1, level: 100}, feed: true, want: 100},
		{name: "waits for nothing", proto: &script{take: -1, level: -1}, feed: true, want: -1},
		{name: "not a DrainWaiter", proto: plain{}, feed: true, want: -1},
		{name: "closed", proto: &script{take: -1, level: 100}, feed: true, closed: true, want: -1},
	} {
		c, _ := newCore(tc.proto)
		if tc.feed {
			c.Feed([]byte("x"), 1)
		}
		if tc.closed {
			c.Closed(nil)
		}
		if got := c.DrainLevel(); got != tc.want {
			t.Errorf("%s: DrainLevel %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestHijackAndClose(t *testing.T) {
	p := &script{take: -1}
	c, _ := newCore(p)
	c.Feed([]byte("x"), 1)
	if !c.Linger() {
		t.Fatal("a served connection that closes should linger")
	}
	c.Hijacked()
	if c.Linger() || !c.Closing() || !c.IsHijacked() {
		t.Fatal("a hijacked connection lingers or stays open")
	}
	c.Closed(nil)
	if p.closes != 0 {
		t.Fatal("OnClose after a hijack")
	}

	p2 := &script{take: -1}
	c2, _ := newCore(p2)
	c2.Feed([]byte("x"), 1)
	boom := errors.New("gone")
	c2.Closed(boom)
	c2.Closed(nil)
	if p2.closes != 1 || p2.closedErr != boom {
		t.Fatalf("OnClose %d times, err %v", p2.closes, p2.closedErr)
	}
}

func TestFlushedLevel(t *testing.T) {
	for _, tc := range []struct {
		name            string
		proto           httpmsg.Proto
		level, outbound int
		closed          bool
		want            int
		told            bool // AfterFlush(outbound)
	}{
		{name: "no one waits", proto: &script{take: -1, level: -1}, outbound: 10, want: -1, told: true},
		{name: "a DrainWaiter's level", proto: &script{take: -1, level: 100}, outbound: 150, want: 100, told: true},
		{name: "nothing unsent", proto: &script{take: -1, level: 100}, want: -1, told: true},
		{name: "no DrainWaiter", proto: plain{}, outbound: 10, want: -1},
		{name: "closed: the protocol hears nothing", proto: &script{take: -1, level: 100}, outbound: 10, closed: true, want: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newCore(tc.proto)
			c.Feed([]byte("x"), 1)
			if tc.closed {
				c.Closed(nil)
			}
			if got := c.FlushedLevel(tc.outbound); got != tc.want {
				t.Fatalf("level %d, want %d", got, tc.want)
			}
			if p, ok := tc.proto.(*script); ok {
				if told := len(p.flushes) == 1 && p.flushes[0] == tc.outbound; told != tc.told {
					t.Fatalf("AfterFlush calls %v, want one with %d: %v", p.flushes, tc.outbound, tc.told)
				}
			}
		})
	}
}

func TestHold(t *testing.T) {
	boom := errors.New("malformed pipelined request")
	for _, tc := range []struct {
		name     string
		fail     bool // the Feed that asked for the run failed
		hijacked bool
		held     bool
	}{
		{name: "a failure with an answer owed is held", fail: true, held: true},
		{name: "nothing failed: nothing held", held: false},
		{name: "hijacked: nothing held", fail: true, hijacked: true, held: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &script{take: -1, busy: true}
			if tc.fail {
				p.dataErr = boom
			}
			c, _ := newCore(p)
			c.Feed([]byte("GET / and then garbage"), 1)
			if tc.hijacked {
				c.Hijacked()
			}
			if got := c.Hold(); got != tc.held {
				t.Fatalf("Hold = %v, want %v", got, tc.held)
			}
			if !tc.held {
				return
			}
			if c.Closing() || c.Err() != nil {
				t.Fatalf("closing %v (%v) while the answer is owed", c.Closing(), c.Err())
			}
			c.Wake() // a wake-up while the handler runs
			if c.Closing() {
				t.Fatal("closing while the handler still runs")
			}
			p.busy = false // the handler's answer, taken by the next OnWake
			c.Wake()
			if !c.Closing() || c.Err() != boom {
				t.Fatalf("closing %v with %v, want the held failure", c.Closing(), c.Err())
			}
		})
	}
}

// tlsFake is a TLS connection whose handshake negotiated proto by ALPN.
type tlsFake struct {
	fakeConn
	st tls.ConnectionState
}

func (c *tlsFake) TLSConnectionState() *tls.ConnectionState { return &c.st }

func TestNegotiated(t *testing.T) {
	for _, tc := range []struct {
		name string
		alpn string // "-": cleartext
		want string
	}{
		{name: "ALPN h2", alpn: "h2", want: "h2"},
		{name: "ALPN http/1.1", alpn: "http/1.1", want: "h1"},
		{name: "no ALPN", want: "h1"},
		{name: "cleartext: the first bytes choose", alpn: "-", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h1, h2 := &script{take: -1}, &script{take: -1}
			protos := &protoselect.Protocols{
				NewH1: func(httpmsg.Conn) httpmsg.Proto { return h1 },
				NewH2: func(httpmsg.Conn) httpmsg.Proto { return h2 },
			}
			var conn httpmsg.Conn
			var c *Core
			if tc.alpn == "-" {
				fc := &fakeConn{}
				conn = fc
				c = New(conn, protos, to)
				fc.core = c
			} else {
				fc := &tlsFake{st: tls.ConnectionState{NegotiatedProtocol: tc.alpn}}
				conn = fc
				c = New(conn, protos, to)
				fc.core = c
			}
			c.Negotiated()
			got := map[httpmsg.Proto]string{nil: "", h1: "h1", h2: "h2"}[c.Proto()]
			if got != tc.want {
				t.Fatalf("chose %q, want %q", got, tc.want)
			}
			if tc.want != "" && !c.Linger() {
				t.Fatal("a negotiated connection that closes should linger")
			}
		})
	}
}
