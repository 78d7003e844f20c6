package celerisgrpc

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/gzip" // registers gzip
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/celeris-dev/celeris"
)

// rpc is one call on either transport: the Context (native) or an
// http.ResponseWriter (ServeHTTP). It is the call's grpc.ServerTransportStream.
// The handler's goroutine owns it; a stream's RecvMsg may run on another
// goroutine than its SendMsg (grpc-go allows one of each), so they share only
// what neither changes.
type rpc struct {
	srv  *Server
	name string

	c  *celeris.Context // native path
	sw *celeris.StreamWriter
	w  http.ResponseWriter // net/http path

	ctx     context.Context
	mr      msgReader
	out     []byte // encode buffer (pooled)
	scratch []byte // uncompressed encoding, when compressing
	// encoding is the grpc-encoding of the request and the response ("": identity).
	encoding string
	bufs     *rpcBufs

	mu         sync.Mutex // guards header, trailer, headerSent, done
	header     metadata.MD
	trailer    metadata.MD
	headerSent bool
	done       bool // the status was written

	peer peer.Peer // the context's peer.Peer
}

var errHeaderSent = status.Error(codes.Internal, "transport: the stream is done or WriteHeader was already called")

var _ grpc.ServerTransportStream = (*rpc)(nil)

// Method implements grpc.ServerTransportStream.
func (r *rpc) Method() string { return r.name }

// SetHeader implements grpc.ServerTransportStream: md joins the response
// headers, sent with the first message or the status.
func (r *rpc) SetHeader(md metadata.MD) error {
	if md.Len() == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.headerSent || r.done {
		return errHeaderSent
	}
	r.header = joinMD(r.header, md)
	return nil
}

// SendHeader implements grpc.ServerTransportStream: the headers leave now.
func (r *rpc) SendHeader(md metadata.MD) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.headerSent || r.done {
		return errHeaderSent
	}
	r.header = joinMD(r.header, md)
	if err := r.sendHeaderLocked(); err != nil {
		return err
	}
	return r.flush()
}

// SetTrailer implements grpc.ServerTransportStream.
func (r *rpc) SetTrailer(md metadata.MD) error {
	if md.Len() == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return errHeaderSent
	}
	r.trailer = joinMD(r.trailer, md)
	return nil
}

// joinMD adds md's pairs to dst (made when nil), with lower-case keys.
func joinMD(dst, md metadata.MD) metadata.MD {
	if dst == nil {
		dst = make(metadata.MD, len(md))
	}
	for k, vs := range md {
		k = strings.ToLower(k)
		dst[k] = append(dst[k], vs...)
	}
	return dst
}

const grpcContentType = "application/grpc"

// sendHeaderLocked starts the response: status 200, content-type and the
// header metadata. Nothing is pushed to the client until a flush or the end.
func (r *rpc) sendHeaderLocked() error {
	r.headerSent = true
	if r.c != nil {
		c := r.c
		c.SetHeader("content-type", grpcContentType)
		if r.encoding != "" {
			c.SetHeader("grpc-encoding", r.encoding)
		}
		visitMD(r.header, c.AddHeader)
		sw, err := c.Stream(http.StatusOK, "")
		r.sw = sw
		return err
	}
	h := r.w.Header()
	h.Set("Content-Type", grpcContentType)
	if r.encoding != "" {
		h.Set("Grpc-Encoding", r.encoding)
	}
	visitMD(r.header, h.Add)
	r.w.WriteHeader(http.StatusOK)
	return nil
}

// write sends an encoded message, starting the response first if needed.
func (r *rpc) write(b []byte, flush bool) error {
	r.mu.Lock()
	if r.done {
		r.mu.Unlock()
		return status.Error(codes.Internal, "grpc: the RPC has ended")
	}
	if !r.headerSent {
		if err := r.sendHeaderLocked(); err != nil {
			r.mu.Unlock()
			return r.writeErr(err)
		}
	}
	r.mu.Unlock()
	var err error
	if r.c != nil {
		_, err = r.sw.Write(b)
	} else {
		_, err = r.w.Write(b)
	}
	if err == nil && flush {
		err = r.flush()
	}
	return r.writeErr(err)
}

// writeErr turns a failed write into the status grpc-go reports for it.
func (r *rpc) writeErr(err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := r.ctx.Err(); ctxErr != nil {
		return status.FromContextError(ctxErr).Err()
	}
	return status.Error(codes.Unavailable, "grpc: writing the response failed: "+err.Error())
}

// flush pushes what was written to the client.
func (r *rpc) flush() error {
	if r.c != nil {
		if r.sw == nil {
			return nil
		}
		return r.sw.Flush()
	}
	if f, ok := r.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// finish ends the RPC with st (nil: OK): trailers after the messages, or a
// Trailers-Only response (one HEADERS frame) when nothing was sent.
func (r *rpc) finish(st *status.Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	r.done = true
	code, msg, details := statusTrailer(st)
	if r.c != nil {
		c := r.c
		if !r.headerSent {
			// Trailers-Only: header metadata, status and trailer metadata in one
			// HEADERS frame ending the stream.
			c.SetHeader("content-type", grpcContentType)
			visitMD(r.header, c.AddHeader)
			putStatus(c.SetHeader, "", code, msg, details)
			visitMD(r.trailer, c.AddHeader)
			_ = c.Blob(http.StatusOK, "", nil)
			return
		}
		putStatus(c.SetTrailer, "", code, msg, details)
		visitMD(r.trailer, c.AddTrailer)
		return // the server ends the stream with the trailers
	}
	h := r.w.Header()
	if !r.headerSent {
		h.Set("Content-Type", grpcContentType)
		visitMD(r.header, h.Add)
		putStatus(h.Set, "", code, msg, details)
		visitMD(r.trailer, h.Add)
		r.w.WriteHeader(http.StatusOK)
		return
	}
	putStatus(h.Set, http.TrailerPrefix, code, msg, details)
	visitMD(r.trailer, func(k, v string) { h.Add(http.TrailerPrefix+k, v) })
}

// putStatus sets the status fields (grpc-status, and grpc-message and
// grpc-status-details-bin when not empty) with set, each name after prefix.
func putStatus(set func(k, v string), prefix, code, msg, details string) {
	set(prefix+"grpc-status", code)
	if msg != "" {
		set(prefix+"grpc-message", msg)
	}
	if details != "" {
		set(prefix+"grpc-status-details-bin", details)
	}
}

// recv reads and decodes the next request message into m: io.EOF at the end
// of the request.
func (r *rpc) recv(m any) error {
	b, err := r.mr.next()
	if err != nil {
		return r.readErr(err)
	}
	return decodeMsg(b, m)
}

// readErr turns a failed read into a status (io.EOF stays io.EOF).
func (r *rpc) readErr(err error) error {
	if err == io.EOF {
		return err
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if ctxErr := r.ctx.Err(); ctxErr != nil {
		return status.FromContextError(ctxErr).Err()
	}
	return status.Error(codes.Canceled, "grpc: reading the request failed: "+err.Error())
}

// send encodes m and writes it (flushed: streaming RPCs).
func (r *rpc) send(m any, flush bool) error {
	b, scratch, err := appendMsg(r.out[:0], m, r.srv.opts.maxSend, r.mr.comp, r.scratch)
	r.out, r.scratch = b, scratch
	if err != nil {
		return err
	}
	return r.write(b, flush)
}

// serverStream is the grpc.ServerStream of a streaming RPC.
type serverStream struct{ r *rpc }

func (s serverStream) SetHeader(md metadata.MD) error  { return s.r.SetHeader(md) }
func (s serverStream) SendHeader(md metadata.MD) error { return s.r.SendHeader(md) }
func (s serverStream) SetTrailer(md metadata.MD)       { _ = s.r.SetTrailer(md) }
func (s serverStream) Context() context.Context        { return s.r.ctx }
func (s serverStream) SendMsg(m any) error             { return s.r.send(m, true) }
func (s serverStream) RecvMsg(m any) error             { return s.r.recv(m) }

// request is what the transports hand serve: the request's fields.
type request struct {
	path        string
	contentType string
	authority   string
	timeout     string // grpc-timeout
	encoding    string // grpc-encoding
	remote      net.Addr
	tls         *tls.ConnectionState
	body        io.Reader
	fields      []field // every header field (names lower case), borrowed
	// stopping is closed when the Celeris server begins Shutdown (native
	// path; nil under net/http).
	stopping <-chan struct{}
}

// serve runs one RPC whose request passed the HTTP checks. parent is the
// request's context.
func (s *Server) serve(r *rpc, parent context.Context, req *request) {
	r.srv, r.name = s, req.path
	r.ctx = parent
	m, known := s.lookup(req.path)
	var comp encoding.Compressor
	if req.encoding != "" && req.encoding != "identity" {
		// A compressor registered with grpc's encoding package (gzip is,
		// by this package); the answer is compressed with it too, as
		// grpc-go's server does.
		if comp = encoding.GetCompressor(req.encoding); comp == nil {
			r.header = metadata.MD{"grpc-accept-encoding": {acceptEncoding()}}
			r.finish(status.Newf(codes.Unimplemented, "grpc: Decompressor is not installed for grpc-encoding %q", req.encoding))
			return
		}
		r.encoding = comp.Name()
	}
	var cancel context.CancelFunc
	if req.timeout != "" {
		d, err := decodeTimeout(req.timeout)
		if err != nil {
			r.finish(status.New(codes.Internal, err.Error()))
			return
		}
		parent, cancel = context.WithTimeout(parent, d)
		defer cancel()
	}
	md, err := incomingMD(req)
	if err != nil {
		r.finish(status.New(codes.Internal, err.Error()))
		return
	}
	// A streaming RPC ends StreamShutdownGrace after the Celeris server began
	// Shutdown (shutdown.go).
	streaming := (known && m.stream != nil) || (!known && s.opts.unknownStream != nil)
	watched := streaming && req.stopping != nil && s.opts.streamGrace >= 0
	if watched {
		var end func()
		parent, end = s.endOnShutdown(parent, req.stopping)
		defer end()
	}
	ctx := metadata.NewIncomingContext(parent, md)
	p := &r.peer
	p.Addr = req.remote
	if req.tls != nil {
		p.AuthInfo = credentials.TLSInfo{State: *req.tls,
			CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}
	}
	ctx = peer.NewContext(ctx, p)
	ctx = grpc.NewContextWithServerTransportStream(ctx, r)
	r.ctx = ctx
	r.mr = msgReader{r: req.body, max: s.opts.maxRecv, buf: r.mr.buf, comp: comp}
	if cancel != nil || watched {
		// A deadline (or shutdown) also ends a read blocked on a silent client. The body
		// belongs to the request: once serve returns it is recycled, so the
		// guard closes it only while the RPC lasts.
		if cl, ok := req.body.(io.Closer); ok {
			g := &closeGuard{cl: cl}
			stop := context.AfterFunc(ctx, g.close)
			defer func() {
				stop()
				g.end()
			}()
		}
	}

	// A panic ends the RPC with Internal, then goes on to the server, which
	// logs it (Celeris recovers handler panics; net/http does too).
	defer func() {
		if p := recover(); p != nil {
			r.finish(status.New(codes.Internal, "grpc: the handler panicked"))
			panic(p)
		}
	}()
	switch {
	case !known && s.opts.unknownStream != nil:
		r.finish(streamStatus(ctx, s.runStream(r, nil, s.opts.unknownStream, &grpc.StreamServerInfo{
			FullMethod: req.path, IsClientStream: true, IsServerStream: true})))
	case !known:
		r.finish(status.New(codes.Unimplemented, s.unknownMessage(req.path)))
	case m.unary != nil:
		r.finish(s.runUnary(r, m))
	default:
		r.finish(streamStatus(ctx, s.runStream(r, m.impl, m.stream.Handler, &grpc.StreamServerInfo{
			FullMethod: m.name, IsClientStream: m.stream.ClientStreams, IsServerStream: m.stream.ServerStreams})))
	}
}

// streamStatus is the status a streaming handler's err ends the RPC with:
// Unavailable when shutdown ended the stream and the handler failed (the health
// Watch returns Canceled then), so that the client retries elsewhere.
func streamStatus(ctx context.Context, err error) *status.Status {
	if err != nil && endedByShutdown(ctx) {
		return shutdownStatus
	}
	return statusOf(err)
}

// runUnary reads the request message, runs the handler and writes its reply.
func (s *Server) runUnary(r *rpc, m *method) *status.Status {
	msg, err := r.mr.next()
	if err == io.EOF {
		return status.New(codes.Internal, "grpc: the request has no message (unary RPC)")
	}
	if err != nil {
		return statusOf(r.readErr(err))
	}
	dec := func(v any) error { return decodeMsg(msg, v) }
	reply, appErr := m.unary.Handler(m.impl, r.ctx, dec, s.opts.unaryInt)
	if appErr != nil {
		return statusOf(appErr)
	}
	if err := r.send(reply, false); err != nil {
		return statusOf(err)
	}
	return nil
}

// runStream runs a streaming handler through the stream interceptor.
func (s *Server) runStream(r *rpc, impl any, h grpc.StreamHandler, info *grpc.StreamServerInfo) error {
	ss := serverStream{r: r}
	if s.opts.streamInt != nil {
		return s.opts.streamInt(impl, ss, info, h)
	}
	return h(impl, ss)
}

// field is one request header field.
type field struct{ k, v string }

// incomingMD builds the request metadata: every field but the reserved ones
// (user-agent and :authority kept, as grpc-go does), -bin values decoded. The
// values are copied into one string (the request's own are borrowed), and the
// value slices share one backing array.
func incomingMD(req *request) (metadata.MD, error) {
	n, size := 2, len(req.contentType)+len(req.authority)
	for _, f := range req.fields {
		if !reservedHeader(f.k) {
			n++
			size += len(f.v)
		}
	}
	buf := make([]byte, 0, size)
	vals := make([]string, 0, n)
	md := make(metadata.MD, n)
	// Values are appended to buf first and turned into strings at the end,
	// when buf no longer moves; starts and keys are kept meanwhile.
	type span struct {
		k          string
		start, end int
	}
	var spansBuf [16]span
	spans := spansBuf[:0]
	add := func(k, v string) {
		start := len(buf)
		buf = append(buf, v...)
		spans = append(spans, span{k, start, len(buf)})
	}
	add("content-type", req.contentType)
	if req.authority != "" {
		add(":authority", req.authority)
	}
	for _, f := range req.fields {
		k, v := f.k, f.v
		if reservedHeader(k) {
			continue
		}
		if strings.HasSuffix(k, "-bin") {
			dv, err := decodeMetadataValue(k, v)
			if err != nil {
				return nil, status.Errorf(codes.Internal, "grpc: malformed binary metadata %q in header %q: %v", v, k, err)
			}
			v = dv
		}
		add(keyName(k), v)
	}
	all := string(buf)
	for _, sp := range spans {
		vals = append(vals, all[sp.start:sp.end])
		v := vals[len(vals)-1 : len(vals) : len(vals)]
		if old, ok := md[sp.k]; ok {
			md[sp.k] = append(old, v[0]) // copies out of vals: cap is bounded
		} else {
			md[sp.k] = v
		}
	}
	return md, nil
}

// keyName returns an owned copy of a metadata key, without allocating for the
// common ones.
func keyName(k string) string {
	switch k {
	case "user-agent":
		return "user-agent"
	case "grpc-accept-encoding":
		return "grpc-accept-encoding"
	case "accept-encoding":
		return "accept-encoding"
	}
	return strings.Clone(k)
}

// closeGuard closes a request body when the RPC's deadline passes, but only
// while the RPC lasts: once serve returned the body is recycled for another
// request (context.AfterFunc's function may start after that).
type closeGuard struct {
	mu    sync.Mutex
	cl    io.Closer
	ended bool
}

func (g *closeGuard) close() {
	g.mu.Lock()
	if !g.ended {
		_ = g.cl.Close()
	}
	g.mu.Unlock()
}

func (g *closeGuard) end() {
	g.mu.Lock()
	g.ended = true
	g.mu.Unlock()
}

// acceptEncoding lists the encodings the server decodes, for
// grpc-accept-encoding.
func acceptEncoding() string {
	if encoding.GetCompressor("gzip") != nil {
		return "identity,gzip"
	}
	return "identity"
}
