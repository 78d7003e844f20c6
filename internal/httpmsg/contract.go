package httpmsg

import "context"

// The engine-protocol contract.
//
// An engine carries bytes; a protocol turns them into requests. Conn (engine ->
// protocol) and Proto (protocol -> engine) are the required halves. Everything
// else either side may offer is one of the optional interfaces declared here,
// once, and nowhere else: an engine or protocol looks for them by type assertion
// against these names, and every implementation asserts them at compile time
// (var _ httpmsg.Drainer = (*Conn)(nil)), so that renaming a method breaks the
// build instead of silently switching a defence off. docs/ARCHITECTURE.md ("The
// engine-protocol contract") has the table of who calls each method, on which
// goroutine, and what it may block on.
//
// Offered by an engine's Conn: OwnedWriter, OutboundReporter, Hijacker,
// DirectRunner, TLSConn.
//
// Offered by a protocol's Proto: Drainer, Upgrader, ProtoSwitcher,
// FlushObserver, DrainWaiter, BodyAwaiter, InputEnder, BodyAborter,
// OutputPooler.
//
// Offered by a protocol's ResponseWriter (besides the framework-facing
// Switcher, InformationalWriter, SizedWriter): ContextWriter, Hijacker,
// LoopWriter, Aborter. A Handler asks a protocol to move an inline exchange to
// a worker with Request.MoveToWorker (see LoopWriter).

// ContextWriter is implemented by every ResponseWriter: Context is the
// request's context.Context, cancelled when the client goes away (the
// connection closes, the HTTP/2 stream is reset), when the request is done, or
// when the server's shutdown deadline passes. It is the only route to the
// request context: the protocols make it on the first call, so that a request
// whose handler never asks costs nothing. Call it from the handler (before
// Serve returns); the context itself stays valid for as long as anyone holds it.
type ContextWriter interface {
	Context() context.Context
}

// LoopWriter is implemented by a ResponseWriter whose exchange may be served
// on the event loop (an HTTP/1.1 exchange, an HTTP/2 stream of an inline
// route). OnLoop reports whether Serve runs on the loop now, where nothing may
// wait for the client: a response that would have to wait past the output
// bound (a large body, a file) is then not written; the Handler records it,
// sets Request.MoveToWorker and returns, and the protocol dispatches the
// exchange to a worker as it dispatches a route that is not inline (HTTP/1.1:
// as a batch, the pipelined requests after it waiting their turn; HTTP/2: the
// stream's handler moves to a worker), where it calls Serve again, with the
// same Request and writer, to write the recorded response within the bound.
// A writer without it never serves on the loop. Called from Serve, on the
// goroutine that runs it.
type LoopWriter interface {
	OnLoop() bool
}

// Dropper is implemented by the state a Handler leaves in Request.Route when
// Serve returns on the loop with Request.MoveToWorker set. A protocol that gives
// such a request up without calling Serve again (no worker would take it, the
// client reset the stream while it waited, the connection closed) calls
// Request.DropMoved, which calls Drop: what the recorded response holds (an open
// file, a pooled Context) is released at once instead of by the garbage
// collector. Called on the loop, once.
type Dropper interface {
	Drop()
}

// Aborter is implemented by a ResponseWriter that can break a streamed
// response off, so that the client sees it failed rather than complete:
// HTTP/1.1 writes no last chunk and closes the connection after what was
// written (RFC 9112 §7.1: the client sees an incomplete chunked message);
// HTTP/2 resets the stream with INTERNAL_ERROR (RFC 9113 §8.1) instead of
// ending it. After Abort the writer takes no more calls (End included).
// Called from Serve, on the goroutine that runs it.
type Aborter interface {
	Abort()
}

// OutboundReporter is implemented by a Conn that can tell how much written
// output it still holds, not yet taken by the socket (gnet's outbound buffer,
// the std engine's writer queue). Protocols bound what they hand over with it:
// HTTP/1.1 stops parsing pipelined requests and blocks streaming handlers,
// HTTP/2 holds DATA back, while it is large. Loop only.
type OutboundReporter interface {
	OutboundBuffered() int
}

// Drainer is implemented by a Proto that can finish gracefully (server
// shutdown): stop taking new requests (HTTP/2 GOAWAY, RFC 9113 §6.8), let those
// in flight finish, then close. The engine calls Drain on the loop, once per
// connection, when the server drains. A Proto without it is closed as soon as it
// is not Busy.
type Drainer interface {
	Drain()
}

// Upgrader is implemented by a Proto (HTTP/1.1) that can hand its connection to
// HTTP/2 (the h2c upgrade, RFC 7540 §3.2): after OnData returned ErrUpgrade and
// TakeSwitch (ProtoSwitcher) had nothing, TakeUpgrade gives the request that
// asked to upgrade and its decoded HTTP2-Settings payload, both owned by the
// caller from then on. Loop only.
type Upgrader interface {
	TakeUpgrade() (req *Request, settings []byte)
}

// ProtoSwitcher is implemented by a Proto whose handler switched the connection
// to another protocol (101 Switching Protocols: WebSocket, see Switcher): after
// OnData or OnWake returned ErrUpgrade, TakeSwitch builds the new Proto on the
// loop, or returns nil when the switch is the h2c upgrade (Upgrader). The old
// Proto gets no more calls, OnClose included.
type ProtoSwitcher interface {
	TakeSwitch() Proto
}

// FlushObserver is implemented by a Proto that wants to know, after each write
// of the engine's output batch, how many bytes the engine still holds unsent
// (the OutboundReporter figure): streaming back-pressure wakes its waiters with
// it. Loop only; it must not block.
type FlushObserver interface {
	AfterFlush(outbound int)
}

// DrainWaiter is implemented by a Proto that waits for the engine's unsent
// output to fall to a level (a blocked streaming handler, held-back parsing or
// DATA): DrainLevel returns that level in bytes, or -1 when nothing waits. The
// engine wakes the connection (OnWake) once its unsent output fell to it. Loop
// only.
type DrainWaiter interface {
	DrainLevel() int
}

// BodyAwaiter is implemented by a Proto whose handlers may wait for a streamed
// request body: AwaitingBody reports whether one does now. The engine then
// applies a progress timeout (the client must keep sending within the idle
// timeout) instead of none, and after the end of input aborts the body
// (BodyAborter). Loop only.
type BodyAwaiter interface {
	AwaitingBody() bool
}

// InputEnder is implemented by a Proto that can still owe answers when the
// client's input ends (a half-close: HTTP/1.1 while a handler serves requests).
// InputEnded tells it the input ended and reports whether answers are owed; the
// engine then keeps the connection open, without reading, until they are
// written. A Proto without it (HTTP/2: its streams wait for frames that cannot
// come) gets the output already queued, then closes. Loop only.
type InputEnder interface {
	InputEnded() bool
}

// BodyAborter is implemented by a Proto that streams request bodies to handlers:
// AbortBody ends a body that will not be completed (the input ended short of it),
// so that the handler's Read fails instead of waiting. Loop only.
type BodyAborter interface {
	AbortBody()
}

// OutputPooler is implemented by a Proto whose large output batches may go back
// to internal/bufpool once written (WebSocket, whose large messages come and go):
// the engine pools a batch of at least bufpool.MinSize instead of keeping it for
// the connection. The method is a marker; it is never called.
type OutputPooler interface {
	PoolOutput()
}

// Outbound returns c's unsent output reporter (OutboundReporter), nil when c
// cannot tell.
func Outbound(c Conn) func() int {
	if ob, ok := c.(OutboundReporter); ok {
		return ob.OutboundBuffered
	}
	return nil
}
