package h2

import (
	"bytes"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// blockingHandler runs on workers and answers when release is closed.
func blockingHandler(release chan struct{}, running *atomic.Int32, peak *atomic.Int32) handlerFunc {
	return handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		running.Add(-1)
		_ = w.WriteResponse(200, nil, []byte("ok"))
	}}
}

// TestRapidReset: CVE-2023-44487. Handlers per connection are bounded, and a
// client resetting streams faster than they complete gets ENHANCE_YOUR_CALM.
func TestRapidReset(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var running, peak atomic.Int32
	hs := newHarness(t, blockingHandler(release, &running, &peak), &Config{MaxHandlersPerConn: 4})
	hs.handshake()
	block := hs.get("/")
	id := uint32(1)
	for i := 0; i < 500 && hs.err == nil; i++ {
		var b []byte
		b = frame.AppendHeaders(b, id, true, true, block)
		b = frame.AppendRSTStream(b, id, frame.ErrCodeCancel)
		hs.send(b)
		id += 2
	}
	hs.expectGoAway(frame.ErrCodeEnhanceYourCalm)
	if p := peak.Load(); p > 4 {
		t.Fatalf("%d handlers ran at once, limit 4", p)
	}
}

// TestHandlerLimitQueues: requests beyond MaxHandlersPerConn wait, then run.
func TestHandlerLimitQueues(t *testing.T) {
	release := make(chan struct{})
	var running, peak atomic.Int32
	hs := newHarness(t, blockingHandler(release, &running, &peak), &Config{MaxHandlersPerConn: 2})
	hs.handshake()
	for id := uint32(1); id <= 19; id += 2 {
		hs.send(frame.AppendHeaders(nil, id, true, true, hs.get("/")))
	}
	testkit.Window(50 * time.Millisecond) // a sleep: the check is that no third handler starts, which has no event
	if n := running.Load(); n != 2 {
		t.Fatalf("%d handlers running, want 2", n)
	}
	close(release)
	hs.awaitEnds(10)
	if p := peak.Load(); p != 2 {
		t.Fatalf("peak %d", p)
	}
}

// TestContinuationFlood: CVE-2024-27316. The header block is bounded in bytes
// whatever the number of CONTINUATION frames.
func TestContinuationFlood(t *testing.T) {
	hs := newHarness(t, helloHandler(true), nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, false, false, hs.get("/")))
	frag := bytes.Repeat([]byte{0x82}, 1000) // ":method: GET", indexed, 1000 times
	for i := 0; i < 200 && hs.err == nil; i++ {
		hs.send(frame.AppendContinuation(nil, 1, false, frag))
	}
	hs.expectGoAway(frame.ErrCodeEnhanceYourCalm)
}

// TestPingFlood: CVE-2019-9512. Control-frame answers the peer does not read are
// bounded.
func TestPingFlood(t *testing.T) {
	hs := newHarness(t, helloHandler(true), nil)
	hs.handshake()
	var b []byte
	for range 20000 {
		b = frame.AppendPing(b, false, [8]byte{1})
	}
	hs.send(b)
	hs.expectGoAway(frame.ErrCodeEnhanceYourCalm)

	// With the engine telling unsent bytes: a peer that reads is never cut off.
	hs = newHarness(t, helloHandler(true), nil)
	hs.c.setOutboundBuffered(func() int { return 0 })
	hs.handshake()
	for range 3 {
		hs.send(b)
	}
	if hs.err != nil {
		t.Fatalf("reading peer cut off: %v", hs.err)
	}
	// One that does not read is.
	hs.c.setOutboundBuffered(func() int { return 1 << 30 })
	hs.send(b)
	if hs.err == nil {
		t.Fatal("non-reading peer not cut off")
	}
}

// TestSettingsFlood: CVE-2019-9515.
func TestSettingsFlood(t *testing.T) {
	hs := newHarness(t, helloHandler(true), nil)
	hs.handshake()
	var b []byte
	for range 20000 {
		b = frame.AppendSettings(b, frame.Setting{ID: frame.SettingEnablePush, Val: 0})
	}
	hs.send(b)
	hs.expectGoAway(frame.ErrCodeEnhanceYourCalm)
}

// TestEmptyFrameFlood: CVE-2019-9518.
func TestEmptyFrameFlood(t *testing.T) {
	hs := newHarness(t, echoHandler(false), nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, false, true, hs.post("/")))
	var b []byte
	for range 5000 {
		b = frame.AppendData(b, 1, false, nil)
	}
	hs.send(b)
	hs.expectGoAway(frame.ErrCodeEnhanceYourCalm)

	hs = newHarness(t, helloHandler(true), nil)
	hs.handshake()
	b = frame.AppendHeaders(nil, 1, true, false, hs.get("/"))
	for range 5000 {
		b = frame.AppendContinuation(b, 1, false, nil)
	}
	hs.send(b)
	hs.expectGoAway(frame.ErrCodeEnhanceYourCalm)
}

// TestHPACKBomb: a small block expanding past MaxHeaderListSize gets 431 (RFC
// 9113 §10.5.1) and the connection, its HPACK state intact, serves on.
func TestHPACKBomb(t *testing.T) {
	hs := newHarness(t, helloHandler(true), nil)
	hs.handshake()
	big := strings.Repeat("b", 3000)
	hs.encBuf.Reset()
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":path", "/"}, {"x-bomb", big}} {
		_ = hs.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	// x-bomb now sits at dynamic index 62: reference it 100 times, one byte each.
	block := append(bytes.Clone(hs.encBuf.Bytes()), bytes.Repeat([]byte{0x80 | 62}, 100)...)
	hs.send(frame.AppendHeaders(nil, 1, true, true, block))
	if r := hs.response(1); r.status != "431" {
		t.Fatalf("%+v", r)
	}
	hs.send(frame.AppendHeaders(nil, 3, true, true, hs.get("/after")))
	if r := hs.response(3); r.status != "200" || string(r.body) != "hello /after" {
		t.Fatalf("%+v", r)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var running, peak atomic.Int32
	hs := newHarness(t, blockingHandler(release, &running, &peak), &Config{MaxConcurrentStreams: 3})
	hs.handshake()
	for id := uint32(1); id <= 5; id += 2 {
		hs.send(frame.AppendHeaders(nil, id, true, true, hs.get("/")))
	}
	hs.send(frame.AppendHeaders(nil, 7, true, true, hs.get("/")))
	hs.expectRST(7, frame.ErrCodeRefusedStream)
}

func TestOversizeFrame(t *testing.T) {
	hs := newHarness(t, helloHandler(true), nil)
	hs.handshake()
	// Only the header: the size is judged before the payload arrives.
	hs.send(frame.AppendHeader(nil, 16385, frame.TypeData, 0, 1))
	hs.expectGoAway(frame.ErrCodeFrameSize)
}

func TestBodyLimits(t *testing.T) {
	cfg := &Config{MaxRequestBodySize: 1000}
	// Declared too large.
	hs := newHarness(t, echoHandler(true), cfg)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, false, true, hs.post("/", "content-length", "5000")))
	f := hs.expect(frame.TypeHeaders, 1)
	if fields, _ := hs.dec.DecodeFull(f.Data); fields[0].Value != "413" {
		t.Fatal(fields)
	}
	hs.expectRST(1, frame.ErrCodeNo)
	// Buffered (inline) body growing too large.
	hs.send(frame.AppendHeaders(nil, 3, false, true, hs.post("/")))
	hs.send(frame.AppendData(nil, 3, false, make([]byte, 1500)))
	f = hs.expect(frame.TypeHeaders, 3)
	if fields, _ := hs.dec.DecodeFull(f.Data); fields[0].Value != "413" {
		t.Fatal(fields)
	}
	hs.expectRST(3, frame.ErrCodeNo)

	// Streamed (worker) body growing too large: the reader fails, the handler
	// answers 413, then the stream is reset with NO_ERROR (RFC 9113 §8.1), not
	// CANCEL: the 413 is the handler's complete answer, which a client would
	// discard on CANCEL.
	readErr := make(chan error, 1)
	h := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		_, err := io.ReadAll(r.BodyReader)
		readErr <- err
		_ = w.WriteResponse(413, nil, []byte("too large"))
	}}
	hs = newHarness(t, h, cfg)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, false, true, hs.post("/")))
	hs.send(frame.AppendData(nil, 1, false, make([]byte, 1500)))
	if err := <-readErr; err != ErrBodyTooLarge {
		t.Fatalf("reader error %v", err)
	}
	f = hs.expect(frame.TypeHeaders, 1)
	if fields, _ := hs.dec.DecodeFull(f.Data); fields[0].Value != "413" {
		t.Fatal(fields)
	}
	hs.expect(frame.TypeData, 1)
	hs.expectRST(1, frame.ErrCodeNo)
}

// TestWriteBackpressure: a worker's Write blocks while the client grants no
// window, and fails once the stream is reset.
func TestWriteBackpressure(t *testing.T) {
	wrote := make(chan int64, 1)
	h := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		_ = w.WriteHeader(200, nil)
		chunk := make([]byte, 32<<10)
		var n int64
		for {
			k, err := w.Write(chunk)
			n += int64(k)
			if err != nil {
				wrote <- n
				return
			}
		}
	}}
	hs := newHarness(t, h, nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, true, true, hs.get("/")))
	hs.expect(frame.TypeHeaders, 1)
	// Drain what the initial 65535 window lets through, then wait.
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		hs.next(20 * time.Millisecond)
	}
	hs.send(frame.AppendRSTStream(nil, 1, frame.ErrCodeCancel))
	select {
	case n := <-wrote:
		if n > 65535+maxQueued+32<<10 {
			t.Fatalf("Write queued %d bytes without backpressure", n)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Write did not fail after RST_STREAM")
	}
}

// TestOutboundHoldBack: with setOutboundBuffered, DATA waits while the engine
// holds too much unsent output, and resumes at the next callback once it drained.
func TestOutboundHoldBack(t *testing.T) {
	var unsent atomic.Int64
	unsent.Store(1 << 30)
	hs := newHarness(t, helloHandler(true), nil)
	hs.c.setOutboundBuffered(func() int { return int(unsent.Load()) })
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, true, true, hs.get("/x")))
	hs.expect(frame.TypeHeaders, 1)
	if f, ok := hs.next(50 * time.Millisecond); ok {
		t.Fatalf("sent %v while the engine is full", f.Type)
	}
	unsent.Store(0)
	if err := hs.c.OnWake(); err != nil {
		t.Fatal(err)
	}
	if f := hs.expect(frame.TypeData, 1); string(f.Data) != "hello /x" || !f.EndStream() {
		t.Fatalf("%q", f.Data)
	}
}

// madeYouReset lists the frames a client may legally send right after opening a
// stream that make the server reset it (CVE-2025-8671, MadeYouReset). Each
// returns the bytes that open stream id (a request whose worker handler starts
// at once) and trigger the reset. enc encodes a header block with the client's
// HPACK encoder. The server runs with Config{InitialWindowSize: mkrWindow}.
var madeYouReset = []struct {
	name    string
	trigger func(enc func(...string) []byte, id uint32) []byte
}{
	{name: "WINDOW_UPDATE increment 0", trigger: func(enc func(...string) []byte, id uint32) []byte {
		b := frame.AppendHeaders(nil, id, true, true, enc(mkrGet...))
		return frame.AppendWindowUpdate(b, id, 0)
	}},
	{name: "WINDOW_UPDATE overflowing the stream window", trigger: func(enc func(...string) []byte, id uint32) []byte {
		b := frame.AppendHeaders(nil, id, true, true, enc(mkrGet...))
		return frame.AppendWindowUpdate(b, id, frame.MaxWindow)
	}},
	{name: "HEADERS on a half-closed stream", trigger: func(enc func(...string) []byte, id uint32) []byte {
		b := frame.AppendHeaders(nil, id, true, true, enc(mkrGet...))
		return frame.AppendHeaders(b, id, true, true, enc("x-t", "1"))
	}},
	{name: "DATA on a half-closed stream", trigger: func(enc func(...string) []byte, id uint32) []byte {
		b := frame.AppendHeaders(nil, id, true, true, enc(mkrGet...))
		return frame.AppendData(b, id, true, []byte("x"))
	}},
	{name: "DATA beyond the stream window", trigger: func(enc func(...string) []byte, id uint32) []byte {
		b := frame.AppendHeaders(nil, id, false, true, enc(mkrPost...))
		return frame.AppendData(b, id, false, make([]byte, mkrWindow+1))
	}},
	{name: "PRIORITY on itself", trigger: func(enc func(...string) []byte, id uint32) []byte {
		b := frame.AppendHeaders(nil, id, true, true, enc(mkrGet...))
		return frame.AppendPriority(b, id, frame.Priority{StreamDep: id, Weight: 15})
	}},
	{name: "invalid header field", trigger: func(enc func(...string) []byte, id uint32) []byte {
		return frame.AppendHeaders(nil, id, true, true, enc(append(mkrGet, "x-a", " v")...))
	}},
	{name: "invalid authority", trigger: func(enc func(...string) []byte, id uint32) []byte {
		return frame.AppendHeaders(nil, id, true, true, enc(":method", "GET", ":scheme", "http", ":path", "/", ":authority", "u@h"))
	}},
	{name: "body longer than content-length", trigger: func(enc func(...string) []byte, id uint32) []byte {
		b := frame.AppendHeaders(nil, id, false, true, enc(append(mkrPost, "content-length", "1")...))
		return frame.AppendData(b, id, true, []byte("ab"))
	}},
	{name: "body shorter than content-length", trigger: func(enc func(...string) []byte, id uint32) []byte {
		b := frame.AppendHeaders(nil, id, false, true, enc(append(mkrPost, "content-length", "3")...))
		return frame.AppendData(b, id, true, []byte("ab"))
	}},
	{name: "invalid trailers", trigger: func(enc func(...string) []byte, id uint32) []byte {
		b := frame.AppendHeaders(nil, id, false, true, enc(mkrPost...))
		b = frame.AppendData(b, id, false, []byte("ab"))
		return frame.AppendHeaders(b, id, true, true, enc(":path", "/"))
	}},
}

var (
	mkrGet  = []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "example.com"}
	mkrPost = []string{":method", "POST", ":scheme", "http", ":path", "/", ":authority", "example.com"}
)

const mkrWindow = 1024

// TestMadeYouReset: CVE-2025-8671. For every way a client can make the server
// reset a stream, resets the server sends count against the rapid reset budget:
// the connection gets GOAWAY ENHANCE_YOUR_CALM once it is spent (and not
// before), the handlers running at once (workers that ignore the reset) never
// exceed MAX_CONCURRENT_STREAMS, and the requests waiting for a handler slot
// never outnumber the open streams.
func TestMadeYouReset(t *testing.T) {
	const mcs = 8
	for _, tt := range madeYouReset {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			var running, peak atomic.Int32
			hs := newHarness(t, blockingHandler(release, &running, &peak), &Config{MaxConcurrentStreams: mcs, InitialWindowSize: mkrWindow})
			hs.handshake()
			resets := map[uint32]bool{}
			id := uint32(1)
			for range 3 * maxResets {
				hs.send(tt.trigger(hs.encode, id))
				id += 2
				if len(hs.c.waiting) > mcs {
					t.Fatalf("%d requests wait for a handler, %d streams may be open", len(hs.c.waiting), mcs)
				}
				if hs.err != nil {
					break
				}
			}
			for {
				f, ok := hs.next(2 * time.Second)
				if !ok {
					t.Fatalf("no GOAWAY after %d streams reset (err %v)", len(resets), hs.err)
				}
				if f.Type == frame.TypeRSTStream {
					resets[f.StreamID] = true
				}
				if f.Type == frame.TypeGoAway {
					if f.ErrCode != frame.ErrCodeEnhanceYourCalm {
						t.Fatalf("GOAWAY %v (%s)", f.ErrCode, f.Data)
					}
					break
				}
			}
			if len(resets) < maxResets {
				t.Fatalf("GOAWAY after %d resets, budget %d", len(resets), maxResets)
			}
			if p := peak.Load(); p > mcs {
				t.Fatalf("%d handlers ran at once, MAX_CONCURRENT_STREAMS %d", p, mcs)
			}
		})
	}
}

// TestResetHandlersBounded: CVE-2025-8671. Handlers of reset streams that do
// not return keep their slots: however many streams the server resets (here
// slower than the budget allows, so the connection lives), no more than
// MAX_CONCURRENT_STREAMS handlers run at once, even when MaxHandlersPerConn asks
// for more, and the requests queued for a slot stay within the open streams.
// Released, every handler returns and the connection serves on.
func TestResetHandlersBounded(t *testing.T) {
	const mcs = 4
	for _, tt := range madeYouReset {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			var running, peak atomic.Int32
			hs := newHarness(t, blockingHandler(release, &running, &peak),
				&Config{MaxConcurrentStreams: mcs, MaxHandlersPerConn: 64, InitialWindowSize: mkrWindow})
			hs.handshake()
			id := uint32(1)
			for i := range 300 {
				if i%(maxResets/2) == 0 {
					// A second has passed: the budget starts again.
					hs.c.defenses.resetSec = time.Now().Add(-2 * time.Second)
				}
				hs.send(tt.trigger(hs.encode, id))
				id += 2
				if hs.err != nil {
					t.Fatalf("connection ended: %v", hs.err)
				}
				if len(hs.c.waiting) > mcs {
					t.Fatalf("%d requests wait for a handler, %d streams may be open", len(hs.c.waiting), mcs)
				}
				hs.drain()
			}
			testkit.Window(20 * time.Millisecond) // a sleep: every submitted handler starts, and the check is that no more than MAX_CONCURRENT_STREAMS do
			if p := peak.Load(); p > mcs {
				t.Fatalf("%d handlers ran at once, MAX_CONCURRENT_STREAMS %d", p, mcs)
			}
			close(release)
			for deadline := time.Now().Add(2 * time.Second); hs.c.handlers > 0 && time.Now().Before(deadline); {
				select {
				case <-hs.fc.wake:
					if err := hs.c.OnWake(); err != nil {
						t.Fatal(err)
					}
				case <-time.After(10 * time.Millisecond):
				}
			}
			if hs.c.handlers != 0 || len(hs.c.waiting) != 0 {
				t.Fatalf("%d handlers, %d waiting after release", hs.c.handlers, len(hs.c.waiting))
			}
			hs.drain()
			hs.send(frame.AppendHeaders(nil, id, true, true, hs.encode(mkrGet...)))
			if r := hs.response(id); r.status != "200" || string(r.body) != "ok" {
				t.Fatalf("%+v", r)
			}
		})
	}
}
