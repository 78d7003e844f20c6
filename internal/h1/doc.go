// Package h1 implements HTTP/1.x for the server (RFC 9110, RFC 9112): an
// incremental request-head parser (ParseHead), a chunked body decoder
// (ChunkedDecoder), response writing (AppendHead, AppendChunk, ...) and the
// per-connection state machine (Conn) that the engine drives.
//
// Life of a request on a Conn (every step on the event loop unless noted):
// OnData parses each complete head in the bytes the engine presents, copies it
// into a pooled exchange, and routes it (Handler.Prepare). Buffered bodies are
// read into the exchange; large or chunked bodies and those expecting 100-continue
// stream through a bodyPipe instead, which holds at most pipeMax of them (an inline
// route buffers small and chunked bodies up to StreamThreshold; past it its handler
// runs on a worker, since reading the rest would block the loop). Inline routes
// run at once and their responses join the output batch. Other requests join the
// connection's batch, which one worker goroutine serves in order (pipelining) and
// hands back through Conn.mu and a wake-up; OnWake writes those bytes and gives
// the connection back to the loop.
// A streamed body keeps flowing to its handler after the response started (full
// duplex); interim responses (WriteInformational, 100 Continue) are handed to the
// loop at once; trailers given to End form the chunked body's trailer section.
//
// Hardening: framing is strict (RFC 9112 §6.3: Content-Length with
// Transfer-Encoding, differing Content-Length, obs-fold, whitespace before the
// colon, bare CR are refused; request smuggling). Host and the authority of
// absolute-form and CONNECT targets must be uri-host [ ":" port ] and not empty
// (httpfield.ValidAuthority; RFC 9112 §3.2; a connection's parser remembers the last
// Host found valid and passes an equal one by comparing bytes). A method longer than MaxMethodLength
// gets 501 at once (RFC 9112 §3). Chunked bodies use CRLF only and nothing the
// grammar leaves out ("funky chunks"), and their framing may not outweigh their
// data (CVE-2023-39326); see ChunkedDecoder. After a refusal the connection
// closes. A streamed body that its handler left unread is read and dropped after
// the handler returned, up to 256 KiB, before the answer goes out (a chunked body
// ends at its trailer section's final CRLF, RFC 9112 §7.1); otherwise the
// connection closes after the answer: body bytes are never parsed as a request
// (0.CL and Expect desyncs).
//
// Files: the parser is parse.go (ParseHead and its refusals), requestline.go,
// fields.go, framing.go (Content-Length, Transfer-Encoding, Expect) and chars.go;
// chunked.go decodes chunked bodies; writer.go and status.go write response heads.
// The connection is server.go (Conn, OnData), batch.go (the worker's batch and its
// hand-off), outbound.go (the output bound), freelist.go (pooled exchanges),
// exchange.go and sized.go (one request's response), pipe.go (streamed bodies) and
// switch.go (leaving HTTP/1.1: the h2c upgrade, Switch, Hijack).
package h1
