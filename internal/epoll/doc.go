// Package epoll is Celeris's own event-loop engine, for Linux: one loop per
// core, each an epoll instance waited on by one goroutine, sharing one
// listening socket (each loop's epoll watches it with EPOLLEXCLUSIVE, so one
// loop wakes per connection, and hands the connection round-robin to the
// loops); an eventfd per loop for wake-ups from handler goroutines;
// non-blocking reads into the loop's buffer and writes of each connection's
// output batch (writev when earlier output waits), EPOLLOUT only while output
// is unsent. The per-connection rules (feed the protocol, protocol choice and
// switch, deadlines, end of input, lingering close, drain once, hijack, the
// output bound's wake-up) are internal/conncore's; this package owns the
// sockets.
//
// Life of a read (all on the connection's loop):
//
//	epoll_wait -> EPOLLIN -> read(2) into the loop's buffer
//	  -> conncore.Core.Feed over the connection's unconsumed input plus the new
//	     bytes, at most PeekWindow at a time; what is left is copied into the
//	     connection's own buffer
//	  -> one write(2) of the output batch the protocol appended to; what the
//	     socket did not take stays queued, EPOLLOUT armed
//	  -> close (after a lingering close) once the protocol asked and the output
//	     left; else reading paused past MaxBufferedInput, and the deadline set
//
// Because the engine owns the descriptors, it needs none of the gnet engine's
// workarounds: reading pauses by dropping EPOLLIN; the end of input is a read
// of zero bytes, after which the connection stays for the answers owed; a
// graceful unlisten closes the listening socket; a hijack takes the
// descriptor out of epoll and gives it to the Go runtime.
//
// Ownership: a conn's fields, and the loop's connection table, are owned by
// the loop's goroutine; other goroutines touch only the wake-up queue (under
// the loop's mutex) and the atomics marked so.
package epoll
