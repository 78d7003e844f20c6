// Package h2 is the HTTP/2 (RFC 9113) connection state machine of Celeris: streams
// (§5.1), flow control (§5.2, §6.9), header compression through one HPACK decoder and
// one encoder per connection (RFC 7541, golang.org/x/net/http2/hpack), write
// ordering, GOAWAY, and the hardening against the known HTTP/2 floods. It implements
// httpmsg.Proto; the engine feeds it bytes and flushes what it writes.
//
// # Ownership
//
// All connection state — HPACK tables, the stream map, windows, output order — is
// owned by the event loop and touched only inside OnData, OnWake, OnClose and
// Shutdown (and the constructors, which the engine calls on the loop). Handlers
// running on worker goroutines hand their results to the loop through the stream's
// shared part (guarded by Conn.mu) and one coalesced httpmsg.Conn.Wake. Fields say
// who owns them.
//
// # Life of a frame
//
// Inbound: OnData matches the client preface, then cuts frames with frame.Parse,
// which rejects oversized frames from their 9-byte header alone. Each frame goes
// through processFrame (frames.go): connection-level frames (SETTINGS, PING, GOAWAY,
// WINDOW_UPDATE on stream 0) act at once; HEADERS and CONTINUATION fragments are fed
// to the HPACK decoder as they arrive (headers.go), whose emit callback validates
// each field (§8.2, §8.3) and fills the stream's httpmsg.Request. At END_HEADERS the
// request is checked and handed to Handler.Prepare on the loop. Its body arrives in
// DATA frames: charged to the connection and stream receive windows, then either
// buffered (inline routes, up to 64 KiB) or appended to the stream's body pipe
// that the worker's BodyReader drains (body.go); a larger body of an inline route
// streams too, its handler running on a worker. Flow-control credit goes back as
// WINDOW_UPDATE once half a window has been consumed, for a piped body only as the
// handler reads: the receive windows bound what is held.
//
// Dispatch (stream.go): an inline route runs Serve right inside OnData; any other
// route runs in place where the engine can (direct.go: on the loop's goroutine
// once OnData returned, until it blocks, when it becomes a worker's) or is
// submitted to the work.Pool, at most MaxHandlersPerConn at a time per
// connection, in place and on workers together. Errors follow RFC 9113 §5.4: a frame.StreamError resets one stream
// with RST_STREAM, a frame.ConnError sends GOAWAY with the last processed stream id
// and closes the connection after the output is flushed. A malformed request
// (§8.1.1: bad field syntax, connection-specific fields, pseudo-header or
// content-length errors, an :authority or Host that is not uri-host [":" port])
// gets a 400 head, then RST_STREAM PROTOCOL_ERROR (malformedRequest); the
// connection keeps serving. A streamed body found longer or shorter than its
// content-length fails the handler's reader with ErrContentLength.
//
// The request context comes from the stream's Context method (the
// ResponseWriter's, httpmsg.ContextWriter, as for HTTP/1.1), made on first call and never
// recycled with the stream, so user code may keep it and contexts derived from
// it after Serve returns. It is cancelled when the stream closes (either side's
// reset, or completion), when the connection ends, and when Serve returns
// (context.go).
//
// Outbound: a response enters through the stream's httpmsg.ResponseWriter
// (writer.go). Inline, its HEADERS are HPACK-encoded at once and its DATA framed
// as far as the windows allow; on a worker, the status, copied fields and body
// bytes are queued on the stream under Conn.mu and the loop is woken. OnWake drains
// the ready streams (send.go): HEADERS (+CONTINUATION, split at the peer's
// SETTINGS_MAX_FRAME_SIZE) always go first, then DATA cut by the peer's frame size
// and the stream and connection send windows; what does not fit waits in the send
// queue for WINDOW_UPDATE. Interim (1xx) heads queued by WriteInformational go out
// before the final HEADERS, each a HEADERS without END_STREAM; trailers given to
// End are a last HEADERS with END_STREAM, after the DATA or right after the
// response HEADERS when there is none (informational.go, send.go). A worker's Write blocks while more than maxQueued bytes
// of its stream are unsent. Every frame of one callback is appended to one buffer
// and leaves through httpmsg.Conn.Write at the end of the callback, so the engine
// writes once per loop iteration.
//
// Hardening (defense.go): rapid reset (CVE-2023-44487), CONTINUATION flood
// (CVE-2024-27316), PING/SETTINGS floods (CVE-2019-9512, CVE-2019-9515), empty
// frame floods (CVE-2019-9518) and HPACK bombs are each bounded; see the limits
// there. MadeYouReset (CVE-2025-8671), where legal frames make the server reset
// the streams a client opens, is rapid reset by other means: those resets draw
// on the same budget (resetForPeer), and a reset stream's handler keeps its slot
// until it returns, so at most MaxConcurrentStreams handlers of a connection
// run at once while the requests waiting for a slot are open streams only.
package h2
