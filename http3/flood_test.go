package celerish3

import (
	"context"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
)

// activeStreams returns the request streams h's connections are serving.
func activeStreams(h *Server) int {
	h.mu.Lock()
	conns := make([]*conn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	n := 0
	for _, c := range conns {
		c.mu.Lock()
		n += c.active
		c.mu.Unlock()
	}
	return n
}

var postRead = frameBytes(frameHeaders, block(":method", "POST", ":scheme", "https", ":path", "/read", ":authority", "a"))

// floodStreams opens n request streams on c, workers at a time, each with a
// request whose handler waits for its body (POST /read), and resets each at
// once from both sides (the "rapid reset" of CVE-2023-44487, as on HTTP/2).
// It returns how many it opened before limit passed.
func floodStreams(t testing.TB, c *rawClient, n, workers int, limit time.Duration) int {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var opened atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for opened.Add(1) <= int64(n) {
				s, err := c.qc.OpenStreamSync(ctx)
				if err != nil {
					opened.Add(-1)
					return
				}
				_, _ = s.Write(postRead)
				s.CancelWrite(quic.StreamErrorCode(ErrCodeRequestCancelled))
				s.CancelRead(quic.StreamErrorCode(ErrCodeRequestCancelled))
			}
			opened.Add(-1)
		})
	}
	wg.Wait()
	return int(min(opened.Load(), int64(n)))
}

// TestStreamFlood: a client that opens thousands of request streams and
// resets each at once (rapid reset) holds at most MaxConcurrentStreams
// requests (QUIC's MAX_STREAMS; each reset cancels its handler and returns
// the stream's credit), the connection keeps serving, and the handler
// goroutines are gone afterwards.
func TestStreamFlood(t *testing.T) {
	const limit = 20
	addr, h := wireServerH(t, Config{MaxConcurrentStreams: limit})
	before := runtime.NumGoroutine()
	c := dialRaw(t, addr)
	c.control()
	var maxActive atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if n := int64(activeStreams(h)); n > maxActive.Load() {
				maxActive.Store(n)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	const n = 3000
	opened := floodStreams(t, c, n, 8, 30*time.Second)
	close(stop)
	<-sampled
	if opened != n {
		t.Fatalf("opened %d of %d streams in 30 s: reset streams do not return their credit", opened, n)
	}
	// Each request counts from its accept until its goroutine ends; QUIC
	// returns a stream's credit when both directions are done, which may come
	// a moment before the goroutine ends, hence the slack.
	if m := maxActive.Load(); m > 2*limit {
		t.Fatalf("%d requests active at once with MaxConcurrentStreams %d", m, limit)
	}
	if c.qc.Context().Err() != nil {
		t.Fatalf("connection closed: %v", context.Cause(c.qc.Context()))
	}
	if resp, err := c.request(getHeaders, true); err != nil || status(t, resp) != "200" {
		t.Fatalf("after the flood: %q %v", resp, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	// Workers that wait for the next request stay (at most maxIdleWorkers);
	// every other goroutine of the flood ends.
	busy := func() int { return runtime.NumGoroutine() - h.workers.idleCount() }
	for activeStreams(h) != 0 || busy() > before+10 {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests active, %d goroutines besides %d idle workers (%d before the flood)", activeStreams(h), busy(), h.workers.idleCount(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%d streams opened and reset; at most %d requests active at once", opened, maxActive.Load())
}

// controlFlood returns the bytes of a run of control frames, numbered from
// first (MAX_PUSH_ID carries the number, so that it never decreases across
// calls): frames the control stream accepts
// and ignores or records (RFC 9114 §7.2.8 reserved types, unknown types such
// as PRIORITY_UPDATE of RFC 9218, MAX_PUSH_ID, an unchanging GOAWAY).
func controlFlood(first, frames int) []byte {
	var b []byte
	for i := first; i < first+frames; i++ {
		switch i % 4 {
		case 0:
			b = append(b, frameBytes(0x1f*uint64(i)+0x21, []byte("grease!"))...)
		case 1:
			b = append(b, frameBytes(0xf0700, varints(0, 0x80))...) // PRIORITY_UPDATE for request stream 0
		case 2:
			b = append(b, frameBytes(frameMaxPushID, varints(uint64(i)))...)
		case 3:
			b = append(b, frameBytes(frameGoAway, varints(1000))...)
		}
	}
	return b
}

// TestControlFrameFlood: a control stream that carries hundreds of thousands
// of frames the server ignores or only records costs the server no memory
// (each frame is consumed as it arrives; no control frame makes the server
// answer, unlike HTTP/2's PING and SETTINGS, so there is no output to queue)
// and the connection keeps serving. A control frame too large to buffer is
// refused with H3_EXCESSIVE_LOAD.
func TestControlFrameFlood(t *testing.T) {
	addr := wireServer(t, Config{})
	c := dialRaw(t, addr)
	ctrl := c.control()
	for i := 0; i < 200; i++ {
		if _, err := ctrl.Write(controlFlood(i*1000, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	if resp, err := c.request(getHeaders, true); err != nil || status(t, resp) != "200" {
		t.Fatalf("after the flood: %q %v", resp, err)
	}
	if c.qc.Context().Err() != nil {
		t.Fatalf("connection closed: %v", context.Cause(c.qc.Context()))
	}
	// A GOAWAY (a frame the server buffers whole) of 1 MiB.
	if _, err := ctrl.Write(appendFrameHeader(nil, frameGoAway, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if code := c.closedWith(); code != ErrCodeExcessiveLoad {
		t.Fatalf("closed with %v, want H3_EXCESSIVE_LOAD", code)
	}
}

// TestWireQPACKLimits: the server's SETTINGS give the client a QPACK dynamic
// table of capacity 0 and no blocked streams, so a header block that
// references a dynamic table (a Required Insert Count above 0, which would
// also block the stream) is QPACK_DECOMPRESSION_FAILED (RFC 9204 §2.2.3,
// §4.5.1.1), and an encoder stream instruction that needs table room, or
// raises the capacity past the advertised 0, is QPACK_ENCODER_STREAM_ERROR
// (RFC 9204 §3.2.3, §4.3.1): connection errors, closing the connection.
func TestWireQPACKLimits(t *testing.T) {
	addr := wireServer(t, Config{})
	for _, tt := range []struct {
		name    string
		request []byte // on a request stream
		encoder []byte // on the encoder stream
		code    ErrCode
	}{
		{name: "required insert count 1", request: frameBytes(frameHeaders, []byte{0x02, 0x00, 0x80}), code: ErrCodeQPACKDecompressionFailed},
		{name: "post-base dynamic reference", request: frameBytes(frameHeaders, []byte{0x02, 0x80, 0x10}), code: ErrCodeQPACKDecompressionFailed},
		{name: "dynamic reference with insert count 0", request: frameBytes(frameHeaders, []byte{0x00, 0x00, 0x80}), code: ErrCodeQPACKDecompressionFailed},
		{name: "insert with literal name", encoder: []byte{0x41, 'a', 0x01, 'b'}, code: ErrCodeQPACKEncoderStream},
		{name: "insert with static name reference", encoder: []byte{0xc0 | 0x01, 0x01, 'x'}, code: ErrCodeQPACKEncoderStream},
		{name: "capacity 1", encoder: []byte{0x21}, code: ErrCodeQPACKEncoderStream},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			c.control()
			if tt.encoder != nil {
				c.uni(append([]byte{streamTypeQPACKEncoder}, tt.encoder...))
			} else {
				go func() { _, _ = c.request(tt.request, true) }()
			}
			if code := c.closedWith(); code != tt.code {
				t.Fatalf("closed with %v, want %v", code, tt.code)
			}
		})
	}
}

// TestOversizedHeaderSection: a HEADERS frame whose length is past
// SETTINGS_MAX_FIELD_SECTION_SIZE is answered 431 (RFC 9114 §4.2.2, RFC 6585
// §5) without the server reading or buffering it, even when it claims a
// gigabyte; the client is asked to stop sending (H3_NO_ERROR) and the
// connection serves on.
func TestOversizedHeaderSection(t *testing.T) {
	c := dialRaw(t, wireServer(t, Config{MaxFieldSectionSize: 4 << 10}))
	c.control()
	for _, length := range []uint64{4<<10 + 1, 1 << 30} {
		s, err := c.qc.OpenStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = s.Write(append(appendFrameHeader(nil, frameHeaders, length), make([]byte, 100)...))
		_ = s.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := io.ReadAll(s)
		if err != nil || status(t, resp) != "431" {
			t.Fatalf("HEADERS of %d bytes: %q %v", length, resp, err)
		}
		s.CancelWrite(0)
	}
	if resp, err := c.request(getHeaders, true); err != nil || status(t, resp) != "200" {
		t.Fatalf("after: %q %v", resp, err)
	}
}
