package h1

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/work"
)

// wakeConn is an httpmsg.Conn whose wake-ups reach the test, which plays the
// event loop.
type wakeConn struct {
	out  []byte
	wake chan struct{}
}

func (w *wakeConn) Write(b []byte) { w.out = append(w.out, b...) }
func (w *wakeConn) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}
func (w *wakeConn) Close()               {}
func (w *wakeConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

// unreadHandler runs on workers. /read reads the whole body; any other path answers
// without reading it. /next answers "next". Every answer is reported on answered.
type unreadHandler struct{ answered chan struct{} }

func (unreadHandler) Prepare(*httpmsg.Request) bool { return false }

func (h unreadHandler) Serve(req *httpmsg.Request, w httpmsg.ResponseWriter) {
	body := "no"
	switch req.Path {
	case "/read":
		b, err := io.ReadAll(req.BodyReader)
		if err != nil {
			_ = w.WriteResponse(400, nil, []byte(err.Error()))
			h.answered <- struct{}{}
			return
		}
		body = fmt.Sprint(len(b))
	case "/next":
		body = "next"
	}
	_ = w.WriteResponse(200, nil, []byte(body))
	h.answered <- struct{}{}
}

const nextReq = "GET /next HTTP/1.1\r\nHost: h\r\n\r\n"

// TestUnreadBodyDiscarded: what a worker's handler leaves of a streamed body is read
// and dropped so that the connection serves the next request (RFC 9112 §7.1: a
// chunked body ends at its trailer section's final CRLF), or the connection closes:
// when a 100-continue was never sent (Expect desync), when more than maxDiscard
// remains, when the rest is malformed. Its bytes never become a request (0.CL).
// The first part is sent, the handler answers, then the other parts arrive.
func TestUnreadBodyDiscarded(t *testing.T) {
	const big = maxDiscard + 1000
	smuggle := "GET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n"
	cl := func(path string, n int, extra string) string {
		return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: h\r\n%sContent-Length: %d\r\n\r\n", path, extra, n)
	}
	te := "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
	bigChunks := strings.Repeat(fmt.Sprintf("%x\r\n%s\r\n", 4096, strings.Repeat("c", 4096)), big/4096+1)
	tests := []struct {
		name      string
		parts     []string // the first, then the others once the handler answered
		wantClose bool     // the connection closes after the first answer
		headClose bool     // and its head says Connection: close
	}{
		{name: "read whole", parts: []string{cl("/read", 10, "") + "helloworld", nextReq}},
		{name: "length, rest later", parts: []string{cl("/x", 10, "") + "hello", "world" + nextReq}},
		{name: "length, request in the rest", parts: []string{cl("/x", 5+len(smuggle), "") + "hello", smuggle + nextReq}},
		{name: "length, rest over maxDiscard", parts: []string{cl("/x", big, "") + "h", strings.Repeat("z", big-1) + nextReq},
			wantClose: true, headClose: true},
		{name: "chunked, final CRLF later", parts: []string{te + "5\r\nhello\r\n0\r\n", "\r\n" + nextReq}},
		{name: "chunked, trailer later", parts: []string{te + "5\r\nhello\r\n0\r\n", "X-T: 1\r\n", "\r\n" + nextReq}},
		{name: "chunked, request in the rest", parts: []string{te + "5\r\nhello\r\n", fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(smuggle), smuggle) + nextReq}},
		{name: "chunked, byte by byte", parts: append([]string{te + "5\r\nhello\r\n"}, strings.Split("3;e=1\r\nabc\r\n0\r\nX-T: 1\r\n\r\n"+nextReq, "")...)},
		// The head went out saying keep-alive: the rest's size was unknown.
		{name: "chunked, rest over maxDiscard", parts: []string{te + "1\r\na\r\n", bigChunks + "0\r\n\r\n" + nextReq}, wantClose: true},
		{name: "chunked, bare LF in the rest", parts: []string{te + "5\r\nhello\r\n", "0\n\r\n" + nextReq}, wantClose: true},
		{name: "chunked, data longer than its size", parts: []string{te + "1\r\na", "b\r\n0\r\n\r\n" + nextReq}, wantClose: true},
		{name: "100-continue never sent", parts: []string{cl("/x", len(smuggle), "Expect: 100-continue\r\n"), smuggle + nextReq},
			wantClose: true, headClose: true},
		{name: "100-continue never sent, chunked", parts: []string{strings.Replace(te, "\r\n\r\n", "\r\nExpect: 100-continue\r\n\r\n", 1), "0\r\n\r\n" + nextReq},
			wantClose: true, headClose: true},
	}
	pool := work.NewPool(0, time.Second)
	defer pool.Stop()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := unreadHandler{answered: make(chan struct{}, 4)}
			wc := &wakeConn{wake: make(chan struct{}, 1)}
			cn := NewConn(wc, &ServerConfig{Handler: h, Pool: pool, StreamThreshold: 4, Limits: Limits{MaxBodySize: 4 << 20}})
			var pending []byte
			closed := false
			feed := func() {
				if len(pending) == 0 || closed {
					return
				}
				n, err := cn.OnData(pending)
				pending = pending[n:]
				if err != nil {
					closed = true
				}
			}
			// loop plays the event loop until cond holds: wake-ups, then input.
			loop := func(cond func() bool) {
				t.Helper()
				deadline := time.After(5 * time.Second)
				for !cond() && !closed {
					select {
					case <-wc.wake:
						if err := cn.OnWake(); err != nil {
							closed = true
						}
						feed()
					case <-deadline:
						t.Fatalf("stuck; output so far %.200q", wc.out)
					case <-time.After(time.Millisecond):
						feed()
					}
				}
			}
			pending = append(pending, tt.parts[0]...)
			feed()
			select {
			case <-h.answered:
			case <-time.After(5 * time.Second):
				t.Fatal("no answer")
			}
			for _, p := range tt.parts[1:] {
				pending = append(pending, p...)
				feed()
			}
			loop(func() bool { return bytes.Count(wc.out, []byte("HTTP/1.1 ")) >= 2 })
			if !closed && !cn.busy && cn.closing {
				closed = true
			}
			br := bufio.NewReader(bytes.NewReader(wc.out))
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("first answer: %v (%q)", err, wc.out)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || resp.Close != tt.headClose {
				t.Fatalf("first answer %d %q close=%v, want close=%v", resp.StatusCode, b, resp.Close, tt.headClose)
			}
			next, err := http.ReadResponse(br, nil)
			if tt.wantClose {
				if !closed || err == nil {
					t.Fatalf("connection kept (closed=%v, next answer %v)", closed, next != nil)
				}
				return
			}
			if err != nil {
				t.Fatalf("no answer to the next request: %v (%q)", err, wc.out)
			}
			if b, _ := io.ReadAll(next.Body); string(b) != "next" {
				t.Fatalf("next answer %q", b)
			}
		})
	}
}
