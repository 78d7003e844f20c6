package stdengine

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/protoselect"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// proto is a protocol for engine tests: each hook is optional.
type proto struct {
	c       httpmsg.Conn
	data    func(p *proto, in []byte) (int, error)
	wake    func(p *proto) error
	level   func() int
	flushed func(outbound int)
	busy    atomic.Bool
	closed  chan error
}

func (p *proto) OnData(in []byte) (int, error) {
	if p.data == nil {
		return len(in), nil
	}
	return p.data(p, in)
}

func (p *proto) OnWake() error {
	if p.wake == nil {
		return nil
	}
	return p.wake(p)
}

func (p *proto) OnClose(err error) { p.closed <- err }
func (p *proto) Busy() bool        { return p.busy.Load() }
func (p *proto) DrainLevel() int {
	if p.level == nil {
		return -1
	}
	return p.level()
}

func (p *proto) AfterFlush(n int) {
	if p.flushed != nil {
		p.flushed(n)
	}
}

// start runs an engine whose connections get the protocol mk returns; tlsOn
// serves TLS (HTTP/1.1 by ALPN: NewH1). It returns the address.
func start(t testing.TB, cfg Config, mk func(c httpmsg.Conn) *proto) string {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	cfg.Protocols.NewH1 = func(c httpmsg.Conn) httpmsg.Proto { return mk(c) }
	e := New(cfg)
	errc := make(chan error, 1)
	go func() { errc <- e.Run() }()
	a, err := e.WaitReady()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
		if err := <-errc; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return a.String()
}

var testCert = sync.OnceValue(func() *selfcert.Cert {
	c, err := selfcert.New("127.0.0.1")
	if err != nil {
		panic(err)
	}
	return c
})

// dial connects to addr, over TLS when tlsOn.
func dial(t testing.TB, addr string, tlsOn bool) net.Conn {
	t.Helper()
	var c net.Conn
	var err error
	if tlsOn {
		c, err = tls.Dial("tcp", addr, &tls.Config{RootCAs: testCert().Pool()})
	} else {
		c, err = net.Dial("tcp", addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

// mode is a way to serve: plaintext or TLS.
type mode struct {
	name  string
	cfg   Config
	tlsOn bool
}

func modeList() []mode {
	return []mode{{name: "plain"}, {name: "tls", cfg: Config{TLSConfig: &tls.Config{Certificates: []tls.Certificate{testCert().TLS}}}, tlsOn: true}}
}

func modes(t *testing.T, f func(t *testing.T, cfg Config, tlsOn bool)) {
	for _, m := range modeList() {
		t.Run(m.name, func(t *testing.T) { f(t, m.cfg, m.tlsOn) })
	}
}

// A goroutine's Wake runs OnWake at once although the owner is blocked in Read
// and the client sends nothing more: the read deadline moved into the past
// interrupts the Read (a plain one and a TLS one alike), and the connection goes
// on reading afterwards, bytes that arrived meanwhile included.
func TestWakeInterruptsRead(t *testing.T) {
	modes(t, func(t *testing.T, cfg Config, tlsOn bool) {
		addr := start(t, cfg, func(c httpmsg.Conn) *proto {
			var mu sync.Mutex
			var ready []byte
			return &proto{c: c, closed: make(chan error, 1),
				data: func(p *proto, in []byte) (int, error) {
					msg := append([]byte("echo:"), in...)
					go func() { // a "worker"
						testkit.Slow(50 * time.Millisecond) // a sleep: a worker that answers later
						mu.Lock()
						ready = append(ready, msg...)
						mu.Unlock()
						p.c.Wake()
					}()
					return len(in), nil
				},
				wake: func(p *proto) error {
					mu.Lock()
					p.c.Write(ready)
					ready = ready[:0]
					mu.Unlock()
					return nil
				},
			}
		})
		c := dial(t, addr, tlsOn)
		for _, m := range []string{"a", "bb", "ccc"} {
			start := time.Now()
			io.WriteString(c, m)
			want := "echo:" + m
			got := make([]byte, len(want))
			if _, err := io.ReadFull(c, got); err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Fatalf("%q, want %q", got, want)
			}
			// Without the interrupt the answer would wait for the client's
			// next bytes, which never come: half the conn's 10 s deadline
			// tells the two apart, however loaded the machine.
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("answer after %v: the wake-up waited for something else", d)
			}
		}
	})
}

// When the protocol waits for its unsent output to fall to a level (DrainLevel),
// the writer wakes the owner as soon as it did, so AfterFlush reports it without
// any further event from the client.
func TestDrainLevelWakesOwner(t *testing.T) {
	modes(t, func(t *testing.T, cfg Config, tlsOn bool) {
		const size = 8 << 20
		drained := make(chan struct{})
		var once sync.Once
		addr := start(t, cfg, func(c httpmsg.Conn) *proto {
			var waiting atomic.Bool
			return &proto{c: c, closed: make(chan error, 1),
				data: func(p *proto, in []byte) (int, error) {
					p.c.Write(make([]byte, size))
					waiting.Store(true)
					return len(in), nil
				},
				level: func() int {
					if waiting.Load() {
						return 0
					}
					return -1
				},
				flushed: func(n int) {
					if n == 0 && waiting.Load() {
						once.Do(func() { close(drained) })
					}
				},
			}
		})
		c := dial(t, addr, tlsOn)
		io.WriteString(c, "go")
		// the output backs up in the writer while the client does not read
		testkit.Wait(t, "the writer blocked in its write", testkit.Parked("stdengine.(*writer).run", "poll.(*FD).Write"))
		if _, err := io.CopyN(io.Discard, c, size); err != nil {
			t.Fatal(err)
		}
		select {
		case <-drained:
		case <-time.After(2 * time.Second):
			t.Fatal("AfterFlush(0) did not come once the output drained")
		}
	})
}

// A protocol that consumes nothing makes the engine stop reading: the client's
// writes then block (TCP flow control) instead of growing the server's buffer.
func TestUnconsumedInputStopsReading(t *testing.T) {
	consumed := make(chan struct{}, 1)
	addr := start(t, Config{MaxBufferedInput: 64 << 10, PeekWindow: 16 << 10}, func(c httpmsg.Conn) *proto {
		return &proto{c: c, closed: make(chan error, 1), data: func(*proto, []byte) (int, error) {
			select {
			case consumed <- struct{}{}:
			default:
			}
			return 0, nil
		}}
	})
	c := dial(t, addr, false)
	buf := make([]byte, 64<<10)
	total := 0
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	for total < 256<<20 {
		n, err := c.Write(buf)
		total += n
		if err != nil {
			break
		}
	}
	if total >= 256<<20 {
		t.Fatalf("the server took %d bytes it could not consume", total)
	}
	select {
	case <-consumed:
	default:
		t.Fatal("the protocol never saw the input")
	}
}

// A connection that sends nothing is closed after the read-header timeout, one
// that went quiet after the idle timeout; a busy one is not closed.
func TestTimeouts(t *testing.T) {
	var busy atomic.Bool
	closed := make(chan error, 4)
	addr := start(t, Config{ReadHeaderTimeout: 200 * time.Millisecond, IdleTimeout: 400 * time.Millisecond}, func(c httpmsg.Conn) *proto {
		p := &proto{c: c, closed: closed}
		p.busy.Store(busy.Load())
		return p
	})
	for _, tc := range []struct {
		name     string
		send     string
		busy     bool
		min, max time.Duration
	}{
		// The server's timers start after start (at accept, or once "x" is
		// read), so a close comes no sooner than its timeout; max only has to
		// tell a close from none, so it is generous for a loaded machine.
		{name: "nothing sent", min: 200 * time.Millisecond, max: 5 * time.Second},
		{name: "idle", send: "x", min: 400 * time.Millisecond, max: 5 * time.Second},
		{name: "busy", send: "x", busy: true, min: 1500 * time.Millisecond},
	} {
		busy.Store(tc.busy)
		start := time.Now()
		c := dial(t, addr, false)
		io.WriteString(c, tc.send)
		wait := tc.max
		if wait == 0 {
			wait = tc.min
		}
		_ = c.SetReadDeadline(time.Now().Add(wait))
		_, err := c.Read(make([]byte, 1))
		d := time.Since(start)
		var ne net.Error
		timedOut := errors.As(err, &ne) && ne.Timeout()
		switch {
		case tc.max == 0 && !timedOut:
			t.Fatalf("%s: closed after %v (%v)", tc.name, d, err)
		case tc.max > 0 && (timedOut || d < tc.min || d > tc.max):
			t.Fatalf("%s: closed after %v (%v), want %v to %v", tc.name, d, err, tc.min, tc.max)
		}
		c.Close()
	}
}

// Stop closes every connection, including one in its TLS handshake, and the
// protocols get ErrStopped.
func TestStopClosesConnections(t *testing.T) {
	closed := make(chan error, 1)
	made := make(chan struct{})
	e := New(Config{Addr: "127.0.0.1:0", Protocols: protoselect.Protocols{NewH1: func(c httpmsg.Conn) httpmsg.Proto {
		p := &proto{c: c, closed: closed}
		p.busy.Store(true)
		close(made)
		return p
	}}})
	errc := make(chan error, 1)
	go func() { errc <- e.Run() }()
	a, err := e.WaitReady()
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, a.String(), false)
	io.WriteString(c, "x")
	// The protocol exists once the owner read the input (a connection stopped
	// before that has no protocol to tell).
	select {
	case <-made:
	case <-time.After(5 * time.Second):
		t.Fatal("no protocol for the connection")
	}
	if n := e.Drain(); n != 1 {
		t.Fatalf("Drain = %d with a busy connection", n)
	}
	if _, err := net.DialTimeout("tcp", a.String(), time.Second); err == nil {
		t.Fatal("accepting after Drain")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if err := <-closed; !errors.Is(err, ErrStopped) {
		t.Fatalf("OnClose(%v), want ErrStopped", err)
	}
	if b, err := io.ReadAll(c); err != nil && !errors.Is(err, io.EOF) && len(b) != 0 {
		t.Fatalf("read after stop: %q %v", b, err)
	}
}
