package h2

import (
	"bytes"
	"io"
	"strconv"
	"testing"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// TestInlineBodyStreams: an inline route's body past maxInlineBody streams to the
// handler (on a worker), from the start when content-length says so, or once it
// grew past the limit. The body arrives whole and in order, and every byte's
// window is given back exactly once: the buffered bytes' window went back as they
// arrived, so the reader's consumption of them must not give it again.
func TestInlineBodyStreams(t *testing.T) {
	const size = maxInlineBody + 3*16384
	body := make([]byte, size)
	for i := range body {
		body[i] = byte(i * 13)
	}
	// Inline; answers the length of the body, or "mismatch".
	h := handlerFunc{
		inline: func(*httpmsg.Request) bool { return true },
		serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
			got := r.Body
			if r.BodyReader != nil {
				got, _ = io.ReadAll(r.BodyReader)
			}
			answer := strconv.Itoa(len(got))
			if !bytes.Equal(got, body) {
				answer = "mismatch"
			}
			_ = w.WriteResponse(200, nil, []byte(answer))
		},
	}
	for _, declared := range []bool{false, true} {
		hs := newHarness(t, h, nil)
		hs.handshake()
		var extra []string
		if declared {
			extra = []string{"content-length", strconv.Itoa(size)}
		}
		hs.send(frame.AppendHeaders(nil, 1, false, true, hs.post("/", extra...)))
		for off := 0; off < size; off += 16384 {
			hs.send(frame.AppendData(nil, 1, off+16384 >= size, body[off:off+16384]))
		}
		r := hs.response(1)
		if r.status != "200" || string(r.body) != strconv.Itoa(size) {
			t.Fatalf("declared %v: status %s, %q", declared, r.status, r.body)
		}
		c := hs.c
		if got, want := c.recvWindow+c.recvCredit, c.cfg.connWindow(); got != want {
			t.Fatalf("declared %v: connection window %d + credit %d = %d, want %d", declared, c.recvWindow, c.recvCredit, got, want)
		}
	}
}

// TestAppendBodyCompacts: bytes already read make room instead of the buffer
// growing, so the window bounds the buffer.
func TestAppendBodyCompacts(t *testing.T) {
	in := make([]byte, 0, 100)
	in, rd := appendBody(in, 0, bytes.Repeat([]byte("a"), 80))
	rd += 70 // the reader took 70
	in, rd = appendBody(in, rd, bytes.Repeat([]byte("b"), 60))
	if cap(in) != 100 || rd != 0 || string(in) != "aaaaaaaaaa"+string(bytes.Repeat([]byte("b"), 60)) {
		t.Fatalf("cap %d, rd %d, %q", cap(in), rd, in)
	}
}
