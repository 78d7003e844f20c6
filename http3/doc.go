// Package celerish3 serves a celeris.Server's routes over HTTP/3 (RFC 9114) on
// QUIC (github.com/quic-go/quic-go). The HTTP/3 layer is this package's own:
// frames, control and QPACK streams, QPACK field sections with the static
// table and literals (RFC 9204: decodeSection and fieldEncoder, checked
// against github.com/quic-go/qpack by FuzzDecodeSection and
// TestAppendHeadersQPACK), SETTINGS, GOAWAY, request streams, trailers and
// error codes. It fills the same httpmsg.Request as HTTP/1.1 and HTTP/2 and
// answers through an httpmsg.ResponseWriter, so the router, Context,
// middleware and error handling are the same objects as on the other
// protocols: no net/http request or response on the path.
//
//	s := celeris.New(celeris.Config{Addr: ":8080", TLSAddr: ":8443", TLSConfig: tc})
//	celerish3.Enable(s, celerish3.Config{})
//	log.Fatal(s.Start()) // HTTP/3 on UDP :8443 too; TLS responses carry Alt-Svc
//
// It lives in a module of its own so that the core module does not require
// quic-go. Enable registers a celeris.Transport, which the server starts after
// its TLS listener (sharing its certificates and its port number) and drains
// and stops on Shutdown.
//
// # Life of a connection
//
// The UDP socket belongs to a quic.Transport; each accepted QUIC connection
// gets a goroutine (conn.serve) that opens the server's control stream,
// sends SETTINGS (QPACK dynamic table capacity 0, no blocked streams, the
// maximum field section size, extended CONNECT) and accepts request streams. The client's
// unidirectional streams (control, QPACK encoder and decoder) are read by a
// goroutine each, through pure parsers (controlParser, encoderStreamParser,
// decoderStreamParser) that enforce RFC 9114 §6.2 and §7 and RFC 9204 §4.
// Shutdown sends GOAWAY with the first stream ID not accepted (§5.2), rejects
// later streams with H3_REQUEST_REJECTED, and closes the connection once its
// requests are answered (the client normally closes it first).
//
// # Life of a request
//
//  1. A request stream gets a goroutine of its own (a worker that outlives the
//     request, so that its grown stack serves the next one) and a pooled
//     reqStream.
//     It reads frames into the stream's buffer: reserved and unknown types
//     are skipped, frames not allowed on a request stream close the
//     connection (requestFrameRule), the first HEADERS frame is decoded into
//     the request (decodeRequestHead: decodeSection, the server's own QPACK
//     decoder for the static table and literals, which allocates nothing;
//     the pseudo-header and field rules of §4.2 and §4.3; a malformed
//     request resets the stream with H3_MESSAGE_ERROR).
//  2. A stream that ended with its header section has no body; otherwise the
//     body is streamed (Request.BodyReader): DATA payloads are read from the
//     stream as the handler reads, so QUIC flow control holds a client back
//     while its handler does not read, and a trailer section lands in
//     Request.Trailer. Content-length is checked against the DATA received
//     (§4.1.2) and the body against the size limit (413).
//  3. The celeris handler runs on that goroutine (Prepare, then Serve); it may
//     block. The server's worker pool is not used, so celeris.Config.MaxWorkers
//     does not bound HTTP/3 handlers: MaxConcurrentStreams does, per
//     connection. Its context is the stream's: cancelled when the client stops
//     reading the response (STOP_SENDING, sent with the reset of a cancelled
//     request), when it resets its side of a stream whose end the server
//     had not read with the head (RESET_STREAM alone: watchReset answers it
//     with H3_REQUEST_CANCELLED, whether or not the handler reads the body),
//     or when the connection closes.
//  4. The response goes out through responseWriter: a HEADERS frame (QPACK,
//     lower-case names, Date, content-length when known), DATA frames, an
//     optional trailer HEADERS frame, then the end of the stream. A stream
//     write blocks while the client's flow-control window is closed, so a
//     slow reader holds its handler back; nothing is buffered past the write
//     in progress. A request body left unread is refused with STOP_SENDING
//     H3_NO_ERROR (§4.1).
//
// An extended CONNECT (RFC 9220, enabled by the server's SETTINGS) makes the
// request stream a tunnel, as on HTTP/2 (RFC 8441): the websocket package serves
// WebSocket over HTTP/3 through the root package's tunnel, with the stream's
// body reader and response writer as its transport.
//
// Lifetimes: the request's strings are the QPACK static table's constants or
// views of the stream's field arena (decodeSection copies each literal there),
// valid until Serve returns (the stream, its arena and its request are then
// recycled);
// a frame payload returned by the stream's reader is valid until the next
// read from the stream.
//
// Request.StreamID holds the low 32 bits of the QUIC stream ID.
package celerish3
