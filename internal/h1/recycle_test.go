package h1

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"unsafe"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

type memConn struct{ out []byte }

func (m *memConn) Write(b []byte)       { m.out = append(m.out, b...) }
func (m *memConn) Wake()                {}
func (m *memConn) Close()               {}
func (m *memConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

// recycleHandler runs inline; /stream answers with a streamed response, anything
// else echoes the body length.
type recycleHandler struct{}

func (recycleHandler) Prepare(*httpmsg.Request) bool { return true }

func (recycleHandler) Serve(req *httpmsg.Request, w httpmsg.ResponseWriter) {
	body := req.Body
	if req.BodyReader != nil {
		body, _ = io.ReadAll(req.BodyReader)
	}
	if req.Path == "/stream" {
		_ = w.WriteHeader(200, []httpmsg.Field{{Name: "X-Big", Value: strings.Repeat("v", 3000)}})
		_, _ = w.Write(bytes.Repeat([]byte("s"), 20000))
		_ = w.End(nil)
		return
	}
	_ = w.WriteResponse(200, nil, []byte(strings.Repeat("x", len(body)%7)))
}

// TestRecycledExchangeAccounting: after every kind of request (bodies of both
// framings with trailers, streamed HTTP/1.0 and HEAD answers, large ones), the
// exchanges on the free list have their buffers within the bounds, each one's kept
// figure matches its buffers, and the connection's total matches the free list.
// release skips the body buffers of a request without a body: this checks that
// nothing else grows them.
func TestRecycledExchangeAccounting(t *testing.T) {
	mc := &memConn{}
	cfg := &ServerConfig{Handler: recycleHandler{}, Limits: Limits{MaxBodySize: 1 << 20}}
	cn := NewConn(mc, cfg)
	big := strings.Repeat("b", 40000)
	reqs := []string{
		"GET / HTTP/1.1\r\nHost: h\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello",
		"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 40000\r\n\r\n" + big,
		"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-T: " + strings.Repeat("t", 2000) + "\r\n\r\n",
		"GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		"HEAD /stream HTTP/1.1\r\nHost: h\r\n\r\n",
		"HEAD /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		"GET /stream HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h\r\nX-Long: " + strings.Repeat("h", 9000) + "\r\n\r\n",
	}
	check := func(after string) {
		t.Helper()
		sum := 0
		for _, ex := range cn.free {
			if want := cap(ex.body) + cap(ex.trail); ex.kept != want {
				t.Fatalf("after %.30q: kept %d, buffers hold %d", after, ex.kept, want)
			}
			if cap(ex.raw) > 8<<10 || cap(ex.body) > 16<<10 || cap(ex.trail) > 1<<10 {
				t.Fatalf("after %.30q: a free exchange keeps large buffers", after)
			}
			// What msg still holds must point into the buffers ex kept: a view into
			// a dropped buffer would keep it alive on the free list.
			if len(ex.msg.Body) > 0 && !within(unsafe.SliceData(ex.msg.Body), ex.body) {
				t.Fatalf("after %.30q: msg.Body outlives its buffer", after)
			}
			for _, f := range ex.msg.Header {
				if !within(unsafe.StringData(f.Name), ex.raw) || !within(unsafe.StringData(f.Value), ex.raw) && f.Value != "" {
					t.Fatalf("after %.30q: a header field outlives the head it came from", after)
				}
			}
			for _, f := range ex.msg.Trailer {
				if !within(unsafe.StringData(f.Name), ex.trail) {
					t.Fatalf("after %.30q: a trailer field outlives its buffer", after)
				}
			}
			for _, f := range ex.hdr[len(ex.msg.Header):] {
				if f.Name != "" || f.Value != "" {
					t.Fatalf("after %.30q: a stale header field in the inline array", after)
				}
			}
			sum += ex.keptBytes()
		}
		if sum != cn.kept || cn.kept > maxKeptBytes {
			t.Fatalf("after %.30q: connection counts %d kept bytes, free list holds %d", after, cn.kept, sum)
		}
	}
	for round := 0; round < 3; round++ {
		for _, r := range reqs {
			mc.out = mc.out[:0]
			// One request at a time, then all of them pipelined in one read.
			if n, err := cn.OnData([]byte(r)); n != len(r) || err != nil {
				t.Fatalf("OnData(%.30q) = %d, %v", r, n, err)
			}
			if !bytes.HasPrefix(mc.out, []byte("HTTP/1.")) {
				t.Fatalf("%.30q: response %.60q", r, mc.out)
			}
			check(r)
			if cn.closing { // the HTTP/1.0 streamed answer is close-delimited
				cn = NewConn(mc, cfg)
			}
		}
	}
	all := strings.Join(reqs[:4], "")
	if n, err := cn.OnData([]byte(all)); n != len(all) || err != nil {
		t.Fatalf("pipelined: %d, %v", n, err)
	}
	check("pipelined")
}

// within reports whether p points into b's array.
func within(p *byte, b []byte) bool {
	if cap(b) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return uintptr(unsafe.Pointer(p)) >= start && uintptr(unsafe.Pointer(p)) < start+uintptr(cap(b))
}
