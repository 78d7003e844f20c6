package ws

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/work"
)

// Limits of one connection's queues.
const (
	outHigh = 1 << 20  // output queued (Conn and engine) past which writers block
	inHigh  = 1 << 20  // queued message bytes past which input is left unread
	keepBuf = smallMsg // buffers up to this size stay with the connection; larger ones are pooled (bufpool)

	// closeTimeout bounds the wait for the client's close frame after the
	// server sent its own (RFC 6455 §7.1.1: the server closes the TCP connection
	// once the closing handshake is done, or when it does not complete).
	closeTimeout = 5 * time.Second
)

// Errors a handler gets.
var (
	// ErrClosed is returned by reads and writes once the connection closed.
	ErrClosed = errors.New("websocket: connection closed")
	// ErrDeadline is returned by a read or write whose deadline passed.
	ErrDeadline = errors.New("websocket: deadline exceeded")
)

// CloseError is returned by ReadMessage once the peer sent a close frame.
type CloseError struct {
	Code   int
	Reason string
}

func (e *CloseError) Error() string {
	return "websocket: closed by the peer with code " + strconv.Itoa(e.Code) + " " + e.Reason
}

// App is what runs on top of a Conn. Exactly one of Handler and the callbacks is
// set.
type App struct {
	// Handler runs on a worker for the connection's whole life; the connection
	// closes (1000) when it returns, if it is still open.
	Handler func(c *Conn)
	// OnOpen, OnMessage and OnClose run on a worker, one at a time and in order,
	// only while there is something to do. OnMessage's payload is valid until it
	// returns. An error from OnMessage closes the connection with 1011 (or with
	// the code of a *CloseError).
	OnOpen    func(c *Conn)
	OnMessage func(c *Conn, op Opcode, payload []byte) error
	OnClose   func(c *Conn, code int, reason string)
}

// Config configures a Conn.
type Config struct {
	MaxMessage int64 // 0: no bound
	Pool       *work.Pool
	// Deflate, when set, is the connection's negotiated permessage-deflate.
	Deflate *Deflate
}

type message struct {
	op   Opcode
	comp bool // permessage-deflate: buf is still compressed
	buf  []byte
}

// Conn is one WebSocket connection: the protocol on its transport and the handle
// the application reads and writes with.
type Conn struct {
	t   httpmsg.Conn // the transport; loop only
	cfg Config
	app App

	// Loop only.
	rd        Reader
	ctl       []byte // control frames (pongs) answered in this read
	closeSent bool   // a close frame went out
	failed    bool   // the client broke the protocol: its input is dropped
	outbound  int    // what the engine held after the last flush (AfterFlush)
	handed    bool   // a message went to the application in this OnData

	closeExpired atomic.Bool // the client did not answer our close in time

	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	cond    sync.Cond
	queue   []message // guarded by mu: messages waiting for the application, from qhead
	qhead   int       // guarded by mu
	queued  int       // guarded by mu: bytes in queue
	free    [][]byte  // guarded by mu: small message buffers to reuse
	out     []byte    // guarded by mu: frames written by the application
	spare   []byte    // guarded by mu: out's other buffer, when small (keepBuf)
	held    int       // guarded by mu: the engine's outbound after the last flush
	running bool      // guarded by mu: a worker runs the application
	gone    bool      // guarded by mu: the transport closed
	inWait  bool      // guarded by mu: OnData left input unread (back-pressure): wake the loop when the queue shrinks
	taking  bool      // guarded by mu: OnData yielded to the application and takes its output itself (no wake-up needed)
	// fragmenting: a writer is sending a message in fragments (writeFrame); other
	// data frames wait. Guarded by mu.
	fragmenting bool
	peerErr     *CloseError
	// closeReq is a close the application asked for, sent by the loop; guarded by mu.
	closeReq  []byte
	wantClose bool
	draining  bool // guarded by mu: the close is the server's shutdown (Drain)
	// failReq is the close frame that fails the connection after a protocol
	// error, sent once the application took the messages that came before the
	// bad frame (and wrote its answers); failSeen: a blocking handler got to the
	// end of them. Guarded by mu.
	failReq    []byte
	failSeen   bool
	readDL     time.Time // guarded by mu
	writeDL    time.Time // guarded by mu
	current    []byte    // guarded by mu: the buffer ReadMessage last returned
	openDone   bool      // guarded by mu: OnOpen ran
	closeDone  bool      // guarded by mu: OnClose ran
	closeCode  int       // guarded by mu: what OnClose reports
	closeWhy   string
	dispatched bool
	task       appTask
}

// NewConn returns the protocol for a transport that just switched to WebSocket.
// Start starts the application.
func NewConn(t httpmsg.Conn, cfg Config, app App) *Conn {
	c := &Conn{t: t, cfg: cfg, app: app}
	c.cond.L = &c.mu
	c.rd.MaxMessage = cfg.MaxMessage
	c.rd.Deflate = cfg.Deflate != nil
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.task.c = c
	return c
}

// Start runs the application on a worker (Handler, or OnOpen when set).
func (c *Conn) Start() {
	if c.app.Handler != nil || c.app.OnOpen != nil {
		c.mu.Lock()
		c.schedule()
		c.mu.Unlock()
	}
}

// Context is cancelled when the connection closes.
func (c *Conn) Context() context.Context { return c.ctx }

// RemoteAddr is the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.t.RemoteAddr() }

// OnData consumes frames (httpmsg.Proto; loop).
func (c *Conn) OnData(in []byte) (int, error) {
	if c.failed {
		return len(in), nil
	}
	c.mu.Lock()
	full := c.queued > inHigh || c.held+len(c.out) > outHigh || c.outbound > outHigh
	if c.failReq != nil {
		c.failed = true // the application failed the connection (a bad compressed message)
	} else if full {
		c.inWait = true // the application wakes the loop once it took messages
	}
	c.mu.Unlock()
	if c.failed {
		return len(in), nil
	}
	if full {
		return 0, nil // back-pressure: the engine stops reading once its buffer is full
	}
	c.ctl = c.ctl[:0]
	n, err := c.rd.Feed(in, c)
	if len(c.ctl) > 0 {
		// Pongs (and a close answer) of this read, in one write. A ping flood is
		// bounded by the engine's read window and, once the client stops reading,
		// by the output check above, which leaves its input unread.
		c.t.Write(c.ctl)
	}
	if c.handed && err == nil {
		// The application has messages: let its worker run now, on this
		// thread, and take what it wrote into this callback's write. A short
		// callback (an echo) is answered in the same loop iteration, without
		// a wake-up of the loop and without the worker waiting for the loop's
		// thread to block (with one P, until sysmon hands the P over). With one
		// P, a callback that computes without blocking holds the loop's thread
		// until it is preempted; with more, another P takes the loop.
		c.handed = false
		c.mu.Lock()
		c.taking = true
		c.mu.Unlock()
		runtime.Gosched()
		c.takeOut()
	}
	if err != nil {
		if errors.Is(err, errCloseDone) {
			return len(in), errCloseDone
		}
		if errors.Is(err, errClosePending) {
			// The close reply waits for the application's answers to the
			// messages before the peer's close (Control); the peer sends
			// nothing after its close frame (RFC 6455 §5.5.1), so the rest
			// of the input is dropped.
			c.failed = true
			c.handed = false
			c.mu.Lock()
			c.taking = true
			c.mu.Unlock()
			runtime.Gosched()
			c.takeOut()
			c.sendFail(false)
			return len(in), nil
		}
		c.fail(CloseCodeFor(err), err.Error())
		return len(in), nil
	}
	return n, nil
}

// errCloseDone ends the connection after the close handshake.
var errCloseDone = errors.New("websocket: closed")

// errClosePending stops reading after the peer's close frame while the
// application still has messages that came before it: the close reply goes out
// once the application answered them (sendFail).
var errClosePending = errors.New("websocket: close reply pending")

// Message queues a complete message for the application (Events; loop).
func (c *Conn) Message(op Opcode, p []byte, comp bool) error {
	c.mu.Lock()
	if c.wantClose || c.closeSent {
		c.mu.Unlock()
		return nil // after our close frame, data is read and dropped (§5.5.1)
	}
	var buf []byte
	switch n := len(c.free); {
	case len(p) > keepBuf && len(c.rd.msg) == len(p) && &c.rd.msg[0] == &p[0]:
		// A large message: the reader's (pooled) buffer is handed over, not
		// copied; the reader takes another from the pool for the next one.
		buf = p
		c.rd.msg = nil
	case n > 0 && len(p) <= keepBuf:
		buf = append(c.free[n-1][:0], p...)
		c.free = c.free[:n-1]
	default:
		buf = append(make([]byte, 0, max(len(p), 64)), p...)
	}
	if cap(c.rd.msg) > keepBuf {
		c.rd.releaseMsg() // a small message in a large buffer: do not keep it
	}
	c.queue = append(c.queue, message{op: op, comp: comp, buf: buf})
	c.queued += len(buf)
	c.handed = true
	c.schedule()
	c.cond.Broadcast()
	c.mu.Unlock()
	return nil
}

// Control answers control frames (Events; loop).
func (c *Conn) Control(op Opcode, p []byte) error {
	switch op {
	case OpPing:
		// RFC 6455 §5.5.2-3: a pong with the ping's payload, for every ping.
		if !c.closeSent {
			c.ctl = AppendFrame(c.ctl, true, OpPong, p)
		}
	case OpClose:
		code, reason, _ := ParseClose(p)
		// RFC 6455 §5.5.1: echo the status code; then the server closes the
		// TCP connection first (§7.1.1).
		reply := code
		if reply == CloseNoStatus {
			reply = CloseNormal
		}
		c.mu.Lock()
		if c.peerErr == nil {
			c.peerErr = &CloseError{Code: code, Reason: string(reason)}
		}
		c.setClose(code, string(reason))
		// Messages that arrived before the close are the application's: it
		// gets them, and its answers go out before the close reply (§5.5.1:
		// the endpoint "MAY delay sending a Close frame until its current
		// message is sent"; every peer library echoes first, and Autobahn's
		// case 7.1.1 expects it). They are pending while some are queued, a
		// callback runs, or a blocking handler holds the last message it read
		// (it has not come back to ReadMessage yet).
		pending := c.qhead < len(c.queue) ||
			c.app.Handler == nil && c.running ||
			c.app.Handler != nil && c.current != nil
		if pending && !c.closeSent && c.failReq == nil {
			c.failReq = AppendClose(nil, reply, "")
		}
		c.cond.Broadcast()
		c.mu.Unlock()
		if c.closeSent {
			return errCloseDone
		}
		if pending {
			time.AfterFunc(closeTimeout, func() {
				c.closeExpired.Store(true)
				c.t.Wake()
			})
			return errClosePending
		}
		// What the application wrote before (answers to earlier messages
		// that OnWake has not taken yet) goes out ahead of the close reply.
		c.mu.Lock()
		c.ctl = append(c.ctl, c.out...)
		c.out = c.out[:0]
		c.mu.Unlock()
		c.closeSent = true
		c.ctl = AppendClose(c.ctl, reply, "")
		return errCloseDone
	}
	return nil // a pong needs no answer
}

// fail sends a close frame with code and closes (loop).
//
// Messages that arrived complete before the bad frame are still the
// application's: the close frame follows its answers to them (Autobahn's cases
// 3.2 and 4.1.3 expect the echo first), or closeTimeout, whichever comes first.
func (c *Conn) fail(code int, reason string) {
	c.failed = true
	c.mu.Lock()
	c.setClose(code, reason)
	if !c.closeSent {
		c.failReq = AppendClose(nil, code, reason)
	}
	c.cond.Broadcast()
	c.mu.Unlock()
	time.AfterFunc(closeTimeout, func() {
		c.closeExpired.Store(true)
		c.t.Wake()
	})
	c.sendFail(false)
}

// sendFail writes the application's output and the failing close frame, and
// closes, once the application caught up (or force). Loop only.
func (c *Conn) sendFail(force bool) {
	c.mu.Lock()
	req := c.failReq
	caughtUp := c.qhead == len(c.queue) && (c.failSeen || c.app.Handler == nil && !c.running)
	if req == nil || !(caughtUp || force) {
		c.mu.Unlock()
		return
	}
	out := c.out
	c.out, c.failReq, c.wantClose = nil, nil, true
	c.cond.Broadcast()
	c.mu.Unlock()
	if !c.closeSent {
		c.closeSent = true
		c.t.Write(out)
		c.t.Write(req)
	}
	c.t.Close()
}

// Busy: a WebSocket connection is never closed by the HTTP idle timeout.
func (c *Conn) Busy() bool { return true }

// Drain answers a graceful shutdown: close 1001 (going away); the connection ends
// when the client answers (RFC 6455 §7.1.2), or after closeTimeout. The engine
// calls it on every wake-up of the connection while it drains, so only the first
// call wakes the loop: a wake-up per call would keep the loop busy with this
// connection and never read the client's close frame.
func (c *Conn) Drain() {
	c.mu.Lock()
	first := !c.wantClose && !c.gone
	if first {
		c.wantClose, c.draining = true, true
		c.closeReq = AppendClose(nil, CloseGoingAway, "server shutting down")
	}
	c.mu.Unlock()
	if first {
		c.t.Wake()
	}
}

// OnClose ends the connection (httpmsg.Proto; loop).
func (c *Conn) OnClose(error) {
	c.cancel()
	c.mu.Lock()
	c.gone = true
	c.setClose(CloseAbnormal, "")
	c.schedule() // OnClose callback
	c.cond.Broadcast()
	c.mu.Unlock()
}

// setClose records the first close reason (mu held).
func (c *Conn) setClose(code int, reason string) {
	if c.closeCode == 0 {
		c.closeCode, c.closeWhy = code, reason
	}
}

// Close starts the closing handshake with code and reason (any goroutine); the
// connection ends when the client answers (or the transport's timeout passes).
// Closing twice does nothing.
func (c *Conn) Close(code int, reason string) error {
	if !ValidCloseCode(code) {
		return ErrBadCloseCode
	}
	c.mu.Lock()
	if c.wantClose || c.gone {
		c.mu.Unlock()
		return nil
	}
	c.wantClose = true
	c.closeReq = AppendClose(nil, code, reason)
	c.setClose(code, reason)
	c.cond.Broadcast()
	c.mu.Unlock()
	c.t.Wake()
	return nil
}

// SetReadDeadline makes ReadMessage fail with ErrDeadline after t (zero: none).
func (c *Conn) SetReadDeadline(t time.Time) { c.setDeadline(&c.readDL, t) }

// SetWriteDeadline makes writes blocked by a slow client fail with ErrDeadline
// after t (zero: none).
func (c *Conn) SetWriteDeadline(t time.Time) { c.setDeadline(&c.writeDL, t) }

func (c *Conn) setDeadline(dl *time.Time, t time.Time) {
	c.mu.Lock()
	*dl = t
	c.cond.Broadcast()
	c.mu.Unlock()
	if !t.IsZero() {
		time.AfterFunc(time.Until(t), func() {
			c.mu.Lock()
			c.cond.Broadcast()
			c.mu.Unlock()
		})
	}
}
