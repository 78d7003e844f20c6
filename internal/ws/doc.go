// Package ws implements WebSocket (RFC 6455) for the server. The codec: frame
// headers parsed incrementally from bytes and appended to bytes, masking,
// incremental UTF-8 validation, close codes, the opening handshake's accept key
// and permessage-deflate (RFC 7692). The connection: Conn, the protocol
// (httpmsg.Proto) that an HTTP/1.1 connection switches to after 101, or that an
// HTTP/2 stream opened by an extended CONNECT (RFC 8441) carries. Nothing here
// does I/O or knows an engine or HTTP version: the engine presents the bytes that
// arrived and takes the output through httpmsg.Conn.
//
// Life of a WebSocket connection (every step on the event loop unless noted):
//
// The HTTP layer answered the handshake and handed its connection (or, over
// HTTP/2, its stream) to a Conn built by NewConn: from then on Conn is that
// transport's protocol (httpmsg.Proto). OnData feeds the Reader, which unmasks
// frames into the Conn's buffers: a ping is answered at once from the loop, a
// close is answered and ends the connection (once the application answered the
// messages that came before it), and each complete data message is queued: a small one
// copied into one of the connection's small buffers, a large one in the pooled
// buffer (internal/bufpool) the reader unmasked it into, handed over. Once OnData
// queued messages it yields once, so that the worker answers on the loop's thread
// and its output joins this callback's write. Messages are served on a worker (internal/work) by the
// application: a blocking handler, which the worker runs for the connection's
// whole life and which takes messages with ReadMessage; or callbacks, which a
// worker runs only while messages are queued, so that an idle connection holds no
// goroutine at all, only its buffers.
//
// Writes come from any goroutine: WriteMessage appends a frame to the Conn's
// output under mu and wakes the loop, which moves it to the transport's output
// batch (OnWake). A writer blocks while more than outHigh bytes are queued in the
// Conn and the engine together (a client that does not read), and the loop stops
// consuming input (and so, through the engine, reading the socket) while more than
// inHigh bytes of messages wait for the application or outHigh bytes of output for
// the client: memory stays bounded whatever the client sends or does not read.
//
// Files: conn.go holds the input side and closing, app.go the application's side
// (workers, ReadMessage), write.go the output side (WriteMessage, OnWake).
package ws
