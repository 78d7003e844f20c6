package h2

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/work"
)

// fakeConn is an in-memory httpmsg.Conn. Write and Close are called by the
// goroutine that owns the Conn (the test); Wake may come from any goroutine and
// signals the owner to call OnWake.
type fakeConn struct {
	mu     sync.Mutex
	out    []byte
	closed bool
	wake   chan struct{}
}

func newFakeConn() *fakeConn { return &fakeConn{wake: make(chan struct{}, 1)} }

func (f *fakeConn) Write(b []byte) {
	f.mu.Lock()
	f.out = append(f.out, b...)
	f.mu.Unlock()
}

func (f *fakeConn) Wake() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *fakeConn) Close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
}

func (f *fakeConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
}

func (f *fakeConn) take() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.out
	f.out = nil
	return b
}

// handlerFunc adapts functions to httpmsg.Handler.
type handlerFunc struct {
	inline func(*httpmsg.Request) bool
	serve  func(*httpmsg.Request, httpmsg.ResponseWriter)
}

func (h handlerFunc) Prepare(r *httpmsg.Request) bool {
	if h.inline == nil {
		return false
	}
	return h.inline(r)
}

func (h handlerFunc) Serve(r *httpmsg.Request, w httpmsg.ResponseWriter) { h.serve(r, w) }

var testPool = work.NewPool(0, 5*time.Second)

// harness drives a Conn at the frame level, as its event loop would: every
// OnData/OnWake call happens on the test goroutine.
type harness struct {
	t      *testing.T
	fc     *fakeConn
	c      *Conn
	err    error  // last error returned by the Conn
	pend   []byte // input not consumed by OnData
	rbuf   []byte // output not yet parsed
	enc    *hpack.Encoder
	encBuf bytes.Buffer
	dec    *hpack.Decoder
	frames []frame.Frame
}

func newHarness(t *testing.T, h httpmsg.Handler, cfg *Config) *harness {
	t.Helper()
	hs := &harness{t: t, fc: newFakeConn()}
	hs.enc = hpack.NewEncoder(&hs.encBuf)
	hs.dec = hpack.NewDecoder(4096, nil)
	hs.c = NewConn(hs.fc, h, testPool, cfg)
	t.Cleanup(func() { hs.c.OnClose(nil) })
	return hs
}

// handshake sends the client preface and SETTINGS and consumes the server's
// SETTINGS, WINDOW_UPDATE and SETTINGS ACK.
func (hs *harness) handshake(settings ...frame.Setting) {
	hs.t.Helper()
	hs.send(append([]byte(clientPreface), frame.AppendSettings(nil, settings...)...))
	hs.expect(frame.TypeSettings, 0)
	hs.expect(frame.TypeWindowUpdate, 0)
	f := hs.expect(frame.TypeSettings, 0)
	if !f.IsAck() {
		hs.t.Fatalf("want SETTINGS ACK, got %+v", f)
	}
	hs.send(frame.AppendSettingsAck(nil))
}

// send feeds bytes to OnData, keeping what it did not consume.
func (hs *harness) send(b []byte) {
	hs.pend = append(hs.pend, b...)
	n, err := hs.c.OnData(hs.pend)
	hs.pend = hs.pend[n:]
	if err != nil {
		hs.err = err
	}
}

func (hs *harness) encode(fields ...string) []byte {
	hs.encBuf.Reset()
	for i := 0; i+1 < len(fields); i += 2 {
		_ = hs.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return bytes.Clone(hs.encBuf.Bytes())
}

// get encodes a GET request head.
func (hs *harness) get(path string, extra ...string) []byte {
	return hs.encode(append([]string{":method", "GET", ":scheme", "http", ":path", path, ":authority", "example.com"}, extra...)...)
}

func (hs *harness) post(path string, extra ...string) []byte {
	return hs.encode(append([]string{":method", "POST", ":scheme", "http", ":path", path, ":authority", "example.com"}, extra...)...)
}

// next returns the next frame the server wrote, calling OnWake when a handler
// woke the loop, or fails after a timeout. ok is false when the connection was
// closed with nothing more to read.
func (hs *harness) next(timeout time.Duration) (frame.Frame, bool) {
	hs.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		hs.rbuf = append(hs.rbuf, hs.fc.take()...)
		f, n, err := frame.Parse(hs.rbuf, frame.MaxMaxFrameSize)
		if err == nil {
			// Copy: rbuf is reused.
			f.Payload = bytes.Clone(f.Payload)
			f2, _, _ := frame.Parse(frame.AppendRaw(nil, f.Type, f.Flags, f.StreamID, f.Payload), frame.MaxMaxFrameSize)
			hs.rbuf = hs.rbuf[n:]
			return f2, true
		}
		if err != frame.ErrNeedMore {
			hs.t.Fatalf("server wrote a bad frame: %v", err)
		}
		if hs.fc.closed || hs.err != nil {
			return frame.Frame{}, false
		}
		left := time.Until(deadline)
		if left <= 0 {
			return frame.Frame{}, false
		}
		select {
		case <-hs.fc.wake:
			if err := hs.c.OnWake(); err != nil {
				hs.err = err
			}
		case <-time.After(left):
		}
	}
}

// settle runs the loop's wake-ups until the connection is no longer busy: a
// worker hands its response over before its handler has returned, so a client can
// have the whole response while the connection still counts the handler.
func (hs *harness) settle() {
	hs.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for hs.c.Busy() && time.Now().Before(deadline) {
		select {
		case <-hs.fc.wake:
			if err := hs.c.OnWake(); err != nil {
				hs.err = err
			}
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// drain reads the frames the server wrote so far, keeping the HPACK decoder in
// step with the response heads among them.
func (hs *harness) drain() {
	hs.t.Helper()
	var block []byte
	for {
		f, ok := hs.next(0)
		if !ok {
			return
		}
		if f.Type != frame.TypeHeaders && f.Type != frame.TypeContinuation {
			continue
		}
		block = append(block, f.Data...)
		if f.EndHeaders() {
			if _, err := hs.dec.DecodeFull(block); err != nil {
				hs.t.Fatal(err)
			}
			block = nil
		}
	}
}

// expect returns the next frame, skipping WINDOW_UPDATE frames unless t is
// WINDOW_UPDATE, and fails unless it has type t on stream id.
func (hs *harness) expect(t frame.Type, id uint32) frame.Frame {
	hs.t.Helper()
	for {
		f, ok := hs.next(2 * time.Second)
		if !ok {
			hs.t.Fatalf("want %v on stream %d, got nothing (err %v)", t, id, hs.err)
		}
		if f.Type == frame.TypeWindowUpdate && t != frame.TypeWindowUpdate {
			continue
		}
		if f.Type != t || f.StreamID != id {
			hs.t.Fatalf("want %v on stream %d, got %v on stream %d (%x)", t, id, f.Type, f.StreamID, f.Payload)
		}
		return f
	}
}

// expectGoAway waits for GOAWAY with code and the connection's end.
func (hs *harness) expectGoAway(code frame.ErrCode) {
	hs.t.Helper()
	for {
		f, ok := hs.next(2 * time.Second)
		if !ok {
			hs.t.Fatalf("want GOAWAY %v, got nothing", code)
		}
		if f.Type != frame.TypeGoAway {
			continue
		}
		if f.ErrCode != code {
			hs.t.Fatalf("want GOAWAY %v, got %v (%s)", code, f.ErrCode, f.Data)
		}
		if hs.err == nil && !hs.fc.closed {
			hs.t.Fatal("GOAWAY without ending the connection")
		}
		return
	}
}

// expectRST waits for RST_STREAM on id with code.
func (hs *harness) expectRST(id uint32, code frame.ErrCode) {
	hs.t.Helper()
	for {
		f, ok := hs.next(2 * time.Second)
		if !ok {
			hs.t.Fatalf("want RST_STREAM %v on %d, got nothing (err %v)", code, id, hs.err)
		}
		if f.Type == frame.TypeWindowUpdate {
			continue
		}
		if f.Type != frame.TypeRSTStream || f.StreamID != id || f.ErrCode != code {
			hs.t.Fatalf("want RST_STREAM %v on %d, got %v on %d code %v", code, id, f.Type, f.StreamID, f.ErrCode)
		}
		return
	}
}

// expectMalformed waits for the answer to a malformed request (RFC 9113 §8.1.1):
// a 400 response head without END_STREAM, then RST_STREAM PROTOCOL_ERROR.
func (hs *harness) expectMalformed(id uint32) {
	hs.t.Helper()
	f := hs.expect(frame.TypeHeaders, id)
	if f.EndStream() || !f.EndHeaders() {
		hs.t.Fatalf("400 head on %d: END_STREAM %v, END_HEADERS %v", id, f.EndStream(), f.EndHeaders())
	}
	fields, err := hs.dec.DecodeFull(f.Data)
	if err != nil {
		hs.t.Fatal(err)
	}
	if len(fields) == 0 || fields[0].Name != ":status" || fields[0].Value != "400" {
		hs.t.Fatalf("want :status 400 on %d, got %v", id, fields)
	}
	hs.expectRST(id, frame.ErrCodeProtocol)
}

// response reads a whole response on stream id: status, header fields, body and
// trailers.
type response struct {
	status  string
	header  map[string]string
	body    []byte
	trailer map[string]string
}

func (hs *harness) response(id uint32) response {
	hs.t.Helper()
	r := response{header: map[string]string{}, trailer: map[string]string{}}
	target := r.header
	var block []byte
	endStream := false
	for {
		f, ok := hs.next(5 * time.Second)
		if !ok {
			hs.t.Fatalf("response on %d incomplete (err %v)", id, hs.err)
		}
		if f.StreamID != id {
			if f.Type == frame.TypeWindowUpdate || f.Type == frame.TypePing || f.Type == frame.TypeSettings {
				continue
			}
			hs.t.Fatalf("unexpected %v on stream %d", f.Type, f.StreamID)
		}
		switch f.Type {
		case frame.TypeHeaders, frame.TypeContinuation:
			if f.Type == frame.TypeHeaders {
				endStream = f.EndStream()
			}
			block = append(block, f.Data...)
			if !f.EndHeaders() {
				continue
			}
			fields, err := hs.dec.DecodeFull(block)
			if err != nil {
				hs.t.Fatal(err)
			}
			block = nil
			if r.status != "" {
				target = r.trailer
			}
			for _, hf := range fields {
				if hf.Name == ":status" {
					r.status = hf.Value
					continue
				}
				target[hf.Name] = hf.Value
			}
			if endStream {
				return r
			}
		case frame.TypeData:
			r.body = append(r.body, f.Data...)
			if f.EndStream() {
				return r
			}
		case frame.TypeRSTStream:
			hs.t.Fatalf("stream %d reset: %v", id, f.ErrCode)
		case frame.TypeWindowUpdate:
		default:
			hs.t.Fatalf("unexpected %v", f.Type)
		}
	}
}

func newTestDecoder() *hpack.Decoder { return hpack.NewDecoder(4096, nil) }

// awaitEnds reads frames until n streams ended their response with DATA
// END_STREAM, failing after 2 s without a frame.
func (hs *harness) awaitEnds(n int) {
	hs.t.Helper()
	seen := map[uint32]bool{}
	for len(seen) < n {
		f, ok := hs.next(2 * time.Second)
		if !ok {
			hs.t.Fatalf("only %d responses of %d", len(seen), n)
		}
		if f.Type == frame.TypeData && f.EndStream() {
			seen[f.StreamID] = true
		}
	}
}
