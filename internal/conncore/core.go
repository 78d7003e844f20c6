// Package conncore holds the rules every engine applies to a connection,
// written once: feeding the protocol, choosing it and switching it
// (internal/protoselect), deadlines and idle close, the end of input and
// half-close, lingering close, drain once, hijack, and the output bound's
// wake-up. It does no I/O: an engine owns the socket, reads into a buffer,
// hands bytes to Feed, writes what the protocol queued, and asks the Core
// what to do next (close, linger, serve past the end of input, when the
// deadline falls). Core is a state machine driven from the connection's
// event loop only; its table tests drive it with a scripted protocol.
//
// Life of a connection, as an engine drives it:
//
//	open        -> Core{Conn, Protocols, Timeouts}; Deadline for the first bytes
//	               (over TLS, Negotiated once the handshake completed: ALPN chooses)
//	readable    -> Feed(window) until it consumed less than it was given
//	wake-up     -> Wake (OnWake, a protocol switch, a drain asked for)
//	after write -> Flushed(outbound): FlushObserver, and whether a DrainWaiter
//	               waits no longer (the engine then calls Wake); an engine whose
//	               writer goroutine sees the drain asks FlushedLevel instead
//	direct run  -> Hold, when the callback that asked for it failed too
//	every turn  -> Closing() ? close once the output is written (Linger first)
//	               : Deadline(now, buffered input, unsent output)
//	end of input-> EndOfInput(): close now, flush then close, or serve the
//	               answers owed (Feed the rest, Wake, until Done)
//	closed      -> Closed(err): the protocol's OnClose, once
package conncore

import (
	"time"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/protoselect"
)

// Timeouts are a connection's deadlines (the engine's Config).
type Timeouts struct {
	ReadHeader time.Duration // an incomplete request head must complete within it
	Idle       time.Duration // a connection with nothing in progress; write and upload progress
}

// LingerTime is how long a closing connection reads and drops what the client
// still sends after its answer was written and its sending side shut down (as
// net/http's closeWriteAndWait and nginx's lingering_close): a close with input
// unread makes the kernel send a reset, which can destroy the answer (a 413
// before the body ended) in the client's receive buffer.
const LingerTime = 500 * time.Millisecond

// Core is one connection's per-connection state. Every method is for the
// connection's event loop only.
type Core struct {
	conn      httpmsg.Conn
	protocols *protoselect.Protocols
	to        Timeouts

	proto    httpmsg.Proto // nil until chosen
	flushObs httpmsg.FlushObserver
	drainW   httpmsg.DrainWaiter

	wantClose    bool // the protocol called Conn.Close, or failed
	err          error
	held         error // a failure held back while a direct run owes its answer (Hold)
	drainAsked   bool  // the server drains: the protocol is told once, at its next Wake
	drained      bool
	inputEnded   bool
	hijacked     bool
	closed       bool
	partialSince int64 // when the pending partial request began (unix ns); 0: none
	lastProgress int64 // when input was last consumed
	undated      bool  // input was consumed by a Feed without a time: the next Deadline dates it
	lastOutbound int   // unsent output at the previous Deadline
	writeSince   int64 // when unsent output last shrank (or began)
}

// New returns the core of a connection c serving p's protocols.
func New(c httpmsg.Conn, p *protoselect.Protocols, to Timeouts) *Core {
	return &Core{conn: c, protocols: p, to: to}
}

// Proto is the connection's protocol, nil until the first bytes chose it.
func (c *Core) Proto() httpmsg.Proto { return c.proto }

// Negotiated chooses the protocol of a TLS connection whose handshake
// completed, before any input: ALPN decides (protoselect.Protocols.Choose), and
// a protocol that speaks first (HTTP/2's server preface) writes now. A no-op
// once a protocol is chosen, or where the first bytes must choose (cleartext).
func (c *Core) Negotiated() {
	if c.proto != nil {
		return
	}
	if p := c.protocols.Choose(c.conn, nil); p != nil {
		c.setProto(p)
	}
}

// setProto installs p and the optional interfaces asked once per protocol.
func (c *Core) setProto(p httpmsg.Proto) {
	c.proto = p
	c.flushObs, _ = p.(httpmsg.FlushObserver)
	c.drainW, _ = p.(httpmsg.DrainWaiter)
}

// Close records that the protocol asked to close after the output is written
// (the engine's Conn.Close calls it).
func (c *Core) Close() { c.wantClose = true }

// Closing reports whether the connection closes once its output is written:
// the protocol asked, or failed. Nothing more is read or fed.
func (c *Core) Closing() bool { return c.wantClose || c.err != nil }

// Err is the protocol's error that closes the connection, nil for a close
// the protocol asked for.
func (c *Core) Err() error { return c.err }

// fail records err (the first one) and closes.
func (c *Core) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// Feed presents in (at most the engine's window of buffered input, borrowed
// for the call) to the protocol, choosing it first and switching it when it
// hands over, and returns how many bytes were consumed. The engine drops
// them, keeps the rest, and calls Feed again while it consumed everything it
// was given and more is buffered. now (unix ns) dates input progress; 0 leaves
// it to the next Deadline's now (an engine that reads the clock once per wait).
func (c *Core) Feed(in []byte, now int64) int {
	total := 0
	for len(in) > 0 && !c.Closing() {
		if c.proto == nil {
			p := c.protocols.Choose(c.conn, in)
			if p == nil {
				break // a strict prefix of the HTTP/2 preface: wait for more
			}
			c.setProto(p)
			if c.Closing() {
				break // answered and closed by Choose (HTTP/2 refused)
			}
		}
		n, err := c.proto.OnData(in)
		if n > 0 {
			total += n
			c.lastProgress = now
			c.undated = now == 0
		}
		if err == nil {
			break // all taken, or the rest left until more arrives, or a handler ran
		}
		if err == httpmsg.ErrUpgrade {
			if err = c.next(); err == nil {
				in = in[n:]
				continue // the new protocol takes the rest
			}
		}
		c.fail(err)
		break
	}
	return total
}

// next installs the protocol that follows after ErrUpgrade.
func (c *Core) next() error {
	if c.protocols == nil {
		return errNoSwitch // NewFixed
	}
	p, err := c.protocols.Next(c.conn, c.proto)
	if err != nil {
		return err
	}
	c.setProto(p)
	return nil
}

// AskDrain records that the server drains; the next Wake tells the protocol.
func (c *Core) AskDrain() { c.drainAsked = true }

// Wake runs the protocol's OnWake (work handed back by handlers), switches
// protocol when it hands over, and tells it of a drain once.
func (c *Core) Wake() {
	if c.proto == nil || c.Closing() || c.closed {
		if c.proto == nil && c.drainAsked {
			c.wantClose = true // nothing chosen yet: nothing to finish
		}
		return
	}
	err := c.proto.OnWake()
	if err == httpmsg.ErrUpgrade {
		err = c.next()
	}
	if err != nil {
		c.fail(err)
		return
	}
	if c.held != nil && !c.proto.Busy() {
		c.fail(c.held) // the answer owed was taken: the held failure closes
		c.held = nil
		return
	}
	if c.drainAsked && !c.drained && !c.Closing() {
		c.drained = true
		if d, ok := c.proto.(httpmsg.Drainer); ok {
			d.Drain()
		} else if !c.proto.Busy() {
			c.wantClose = true
		}
	}
}

// Flushed is called after each write with the output still unsent. It tells a
// FlushObserver, and reports whether a protocol waiting for the output to
// drain (DrainWaiter) should be woken now.
func (c *Core) Flushed(outbound int) (wake bool) {
	if c.flushObs != nil {
		c.flushObs.AfterFlush(outbound)
	}
	level := c.DrainLevel()
	return level >= 0 && outbound <= level
}

// FlushedLevel is Flushed for an engine whose writer sees the output drain
// (a writer goroutine): it tells a FlushObserver the output still unsent, and
// returns the level at or below which that output wakes the protocol waiting
// for it to drain (DrainWaiter); -1: none waits, or nothing is unsent.
func (c *Core) FlushedLevel(outbound int) int {
	if c.closed {
		return -1
	}
	if c.flushObs != nil {
		c.flushObs.AfterFlush(outbound)
	}
	if outbound == 0 {
		return -1
	}
	return c.DrainLevel()
}

// DrainLevel is the unsent output at or below which a protocol waiting for its
// output to drain (httpmsg.DrainWaiter) goes on; -1 when none waits (no
// DrainWaiter, one that waits for nothing, or the connection closed). An
// engine that learns of drained output only by polling (gnet) times its polls
// by it.
func (c *Core) DrainLevel() int {
	if c.drainW == nil || c.closed {
		return -1
	}
	return c.drainW.DrainLevel()
}

// Hold is called when the callback that asked the engine to run a handler
// itself (a direct run, httpmsg.DirectRunner) also failed: the handler's
// answer is owed. It holds the failure back (Closing reports false), the
// engine reads and feeds nothing more and goes on waking the protocol, and the
// first Wake that finds the protocol no longer busy restores the failure, which
// then closes the connection once the answer is written. It reports whether a
// failure was held.
func (c *Core) Hold() bool {
	if c.err == nil || c.hijacked || c.closed {
		return false
	}
	c.held, c.err = c.err, nil
	return true
}

// Busy reports whether the protocol serves a request.
func (c *Core) Busy() bool { return c.proto != nil && c.proto.Busy() }

// EndAction is what an engine does when the client's input ends.
type EndAction int

const (
	// EndClose: close now (nothing owed, nothing unsent).
	EndClose EndAction = iota
	// EndFlush: write what is queued, then close; read and feed nothing more.
	EndFlush
	// EndServe: answers are owed (a handler serves requests of this
	// connection): keep the connection without reading, go on feeding the
	// input already buffered and waking the protocol until Done.
	EndServe
)

// EndOfInput is called once, when a read found the client's input ended (a
// half-close or a close); unsent is the output not yet written. A protocol that
// can serve past the end (httpmsg.InputEnder: HTTP/1.1) is told, and its
// handlers' answers are awaited; one that cannot (HTTP/2, whose streams wait
// for frames that cannot come) gets what it already wrote, then the close. A
// handler reading a streamed body whose rest will not come has it aborted
// (Done), once the input buffered before the end was consumed.
func (c *Core) EndOfInput(unsent int) EndAction {
	c.inputEnded = true
	if c.proto == nil || c.hijacked {
		return EndClose
	}
	if ie, ok := c.proto.(httpmsg.InputEnder); ok && !c.Closing() && ie.InputEnded() {
		return EndServe
	}
	if unsent > 0 {
		return EndFlush
	}
	return EndClose
}

// abortBody ends a streamed request body that will never complete.
func (c *Core) abortBody() {
	if ab, ok := c.proto.(httpmsg.BodyAwaiter); ok && ab.AwaitingBody() {
		if a, ok := c.proto.(httpmsg.BodyAborter); ok {
			a.AbortBody()
		}
	}
}

// Done reports, after the input ended and answers were owed (EndServe),
// whether the connection may close once its output is written: the protocol
// failed or asked, or serves nothing and could not use what input is left.
// inputLeft: input buffered before the end is not consumed yet; stalled:
// output is queued (a protocol holds input back while it is large, and goes
// on as it drains). Once all the input was consumed, a streamed request body
// still awaited is aborted: its rest cannot come.
func (c *Core) Done(inputLeft bool, stalled bool) bool {
	if c.Closing() {
		return true
	}
	if inputLeft {
		return !stalled && !c.Busy()
	}
	c.abortBody()
	return !c.Busy()
}

// InputEnded reports whether EndOfInput was called.
func (c *Core) InputEnded() bool { return c.inputEnded }

// Linger reports whether a connection that closes, its output written, shuts
// down its sending side and reads on for LingerTime first: not after a hijack
// (the hijacker's descriptor shares the socket), not once the client's input
// ended (nothing more comes), not before a protocol was chosen.
func (c *Core) Linger() bool {
	return c.proto != nil && !c.hijacked && !c.inputEnded
}

// Hijacked records that the connection left the engine (httpmsg.Hijacker):
// the protocol gets no more calls, OnClose included, and the connection closes
// the engine's side once this callback returns.
func (c *Core) Hijacked() {
	c.hijacked = true
	c.closed = true // no OnClose: the hijacker owns the connection
	c.wantClose = true
}

// IsHijacked reports whether Hijacked was called.
func (c *Core) IsHijacked() bool { return c.hijacked }

// Closed ends the protocol (its OnClose, with err) once; the engine calls it
// as the connection closes.
func (c *Core) Closed(err error) {
	if c.closed {
		return
	}
	c.closed = true
	if c.proto != nil {
		c.proto.OnClose(err)
	}
}

// Deadline returns when the connection must be closed (unix ns; 0: never),
// from now, the input buffered and not consumed, and the output unsent:
//
//   - output unsent: the client must take some within the idle timeout
//     (a client that stops reading is closed; a slow steady one is not);
//   - a handler runs (Busy): none, unless it waits for a streamed body, which
//     must make progress within the idle timeout;
//   - a partial request is buffered: the read header timeout, from when it began
//     (a slowloris trickling bytes does not extend it);
//   - nothing in progress: the idle timeout from now.
func (c *Core) Deadline(now int64, in, outbound int) int64 {
	if c.undated {
		c.lastProgress, c.undated = now, false
	}
	if outbound > 0 {
		if c.lastOutbound == 0 || outbound < c.lastOutbound {
			c.writeSince = now
		}
		c.lastOutbound = outbound
		return c.writeSince + int64(c.to.Idle)
	}
	c.lastOutbound = 0
	switch {
	case c.Busy():
		c.partialSince = 0
		if ab, ok := c.proto.(httpmsg.BodyAwaiter); ok && ab.AwaitingBody() {
			if c.lastProgress == 0 {
				c.lastProgress = now
			}
			return c.lastProgress + int64(c.to.Idle)
		}
		return 0
	case in > 0:
		if c.partialSince == 0 {
			c.partialSince = now
		}
		return c.partialSince + int64(c.to.ReadHeader)
	default:
		c.partialSince = 0
		return now + int64(c.to.Idle)
	}
}

// HijackedProto is the protocol of a connection that left its engine
// (httpmsg.Hijacker) while the engine still holds it until the current
// callback returns: it drops input and does nothing else. Engines recognise
// it by type (no lingering close on a hijacked socket).
type HijackedProto struct{}

func (HijackedProto) OnData(in []byte) (int, error) { return len(in), nil }
func (HijackedProto) OnWake() error                 { return nil }
func (HijackedProto) OnClose(error)                 {}
func (HijackedProto) Busy() bool                    { return false }

var _ httpmsg.Proto = HijackedProto{}
