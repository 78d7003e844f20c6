package h2

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/h2/frame"
)

// TestMalformedRequestTable: every malformed request of RFC 9113 §8.1.1 (field
// syntax §8.2.1, connection-specific fields §8.2.2, pseudo-header fields §8.3,
// content-length §8.1.1, trailers §8.1) is answered promptly with a 400 head and
// RST_STREAM PROTOCOL_ERROR, whether the route runs inline or on a worker, and the
// connection keeps serving: a valid request on it succeeds right after.
func TestMalformedRequestTable(t *testing.T) {
	get := func(extra ...string) []string {
		return append([]string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "example.com"}, extra...)
	}
	post := func(extra ...string) []string {
		return append([]string{":method", "POST", ":scheme", "http", ":path", "/", ":authority", "example.com"}, extra...)
	}
	tests := []struct {
		name     string
		head     []string
		data     []string // DATA frames after the head; the last one ends the stream unless trailers follow
		trailers []string // a trailer block with END_STREAM
		noEnd    bool     // the trailer block lacks END_STREAM
	}{
		// §8.2.1: no leading or trailing whitespace in a value.
		{name: "value leading SP", head: get("x-a", " v")},
		{name: "value trailing SP", head: get("x-a", "v ")},
		{name: "value leading HTAB", head: get("x-a", "\tv")},
		{name: "value trailing HTAB", head: get("x-a", "v\t")},
		{name: "value only SP", head: get("x-a", " ")},
		{name: "value SP both ends", head: get("user-agent", " curl ")},
		{name: "pseudo value trailing SP", head: []string{":method", "GET", ":scheme", "http", ":path", "/ ", ":authority", "example.com"}},
		{name: "authority leading SP", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", " example.com"}},
		{name: "method trailing HTAB", head: []string{":method", "GET\t", ":scheme", "http", ":path", "/"}},
		{name: "content-length leading SP", head: post("content-length", " 1"), data: []string{"a"}},
		// §8.2.1: no NUL, CR or LF in a value.
		{name: "value NUL", head: get("x-a", "a\x00b")},
		{name: "value CR", head: get("x-a", "a\rb")},
		{name: "value LF", head: get("x-a", "a\nb")},
		{name: "value CRLF smuggling", head: get("x-a", "a\r\nx-b: c")},
		{name: "path NUL", head: []string{":method", "GET", ":scheme", "http", ":path", "/\x00"}},
		// §8.2.1: names are lower-case tokens.
		{name: "name uppercase", head: get("X-A", "v")},
		{name: "name mixed case", head: get("x-A", "v")},
		{name: "pseudo name uppercase", head: []string{":method", "GET", ":scheme", "http", ":Path", "/"}},
		{name: "name NUL", head: get("x\x00a", "v")},
		{name: "name CR", head: get("x\ra", "v")},
		{name: "name LF", head: get("x\na", "v")},
		{name: "name SP", head: get("x a", "v")},
		{name: "name colon", head: get("x:a", "v")},
		{name: "name non-ASCII", head: get("x\xe9", "v")},
		{name: "name empty", head: get("", "v")},
		// §8.2.2: connection-specific fields; TE only "trailers".
		{name: "connection", head: get("connection", "keep-alive")},
		{name: "keep-alive", head: get("keep-alive", "timeout=5")},
		{name: "proxy-connection", head: get("proxy-connection", "keep-alive")},
		{name: "transfer-encoding", head: post("transfer-encoding", "chunked"), data: []string{"a"}},
		{name: "upgrade", head: get("upgrade", "websocket")},
		{name: "te gzip", head: get("te", "gzip")},
		{name: "te trailers and gzip", head: get("te", "trailers, gzip")},
		// §8.3.1: request pseudo-header fields.
		{name: "no method", head: []string{":scheme", "http", ":path", "/"}},
		{name: "no scheme", head: []string{":method", "GET", ":path", "/"}},
		{name: "no path", head: []string{":method", "GET", ":scheme", "http"}},
		{name: "empty path", head: []string{":method", "GET", ":scheme", "http", ":path", ""}},
		{name: "empty method", head: []string{":method", "", ":scheme", "http", ":path", "/"}},
		{name: "repeated path", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":path", "/"}},
		{name: "repeated authority", head: get(":authority", "example.org")},
		{name: "unknown pseudo", head: get(":foo", "x")},
		{name: "response pseudo", head: get(":status", "200")},
		{name: "pseudo after regular", head: []string{":method", "GET", ":scheme", "http", "x-a", "b", ":path", "/"}},
		{name: "relative path", head: []string{":method", "GET", ":scheme", "http", ":path", "a"}},
		{name: "asterisk path with GET", head: []string{":method", "GET", ":scheme", "http", ":path", "*"}},
		{name: "CONNECT with path", head: []string{":method", "CONNECT", ":authority", "example.com:443", ":path", "/"}},
		{name: "CONNECT without authority", head: []string{":method", "CONNECT"}},
		// §8.1.1: content-length must match the body.
		{name: "content-length not a number", head: post("content-length", "abc"), data: []string{"abc"}},
		{name: "content-length negative", head: post("content-length", "-1"), data: []string{"a"}},
		{name: "content-length list", head: post("content-length", "1,1"), data: []string{"a"}},
		{name: "content-length conflicting", head: post("content-length", "1", "content-length", "2"), data: []string{"a"}},
		{name: "content-length with END_STREAM", head: post("content-length", "1")},
		{name: "body longer than content-length", head: post("content-length", "1"), data: []string{"ab"}},
		{name: "body longer over frames", head: post("content-length", "3"), data: []string{"ab", "cd"}},
		{name: "body shorter than content-length", head: post("content-length", "3"), data: []string{"ab"}},
		{name: "body shorter, then trailers", head: post("content-length", "3"), data: []string{"ab"}, trailers: []string{"x-t", "1"}},
		// §8.1: trailers.
		{name: "trailer value whitespace", head: post(), data: []string{"ab"}, trailers: []string{"x-t", "v "}},
		{name: "trailer uppercase", head: post(), data: []string{"ab"}, trailers: []string{"X-T", "v"}},
		{name: "trailer pseudo", head: post(), data: []string{"ab"}, trailers: []string{":path", "/"}},
		{name: "trailer connection-specific", head: post(), data: []string{"ab"}, trailers: []string{"connection", "close"}},
		{name: "trailers without END_STREAM", head: post(), data: []string{"ab"}, trailers: []string{"x-t", "v"}, noEnd: true},
	}
	for _, inline := range []bool{false, true} {
		t.Run(map[bool]string{true: "inline", false: "worker"}[inline], func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					hs := newHarness(t, echoHandler(inline), nil)
					hs.handshake()
					end := len(tt.data) == 0 && tt.trailers == nil
					hs.send(frame.AppendHeaders(nil, 1, end, true, hs.encode(tt.head...)))
					for i, d := range tt.data {
						last := i == len(tt.data)-1 && tt.trailers == nil
						hs.send(frame.AppendData(nil, 1, last, []byte(d)))
					}
					if tt.trailers != nil {
						hs.send(frame.AppendHeaders(nil, 1, !tt.noEnd, true, hs.encode(tt.trailers...)))
					}
					hs.expectMalformed(1)
					if hs.err != nil {
						t.Fatalf("connection ended: %v", hs.err)
					}
					// A frame the client sent before it saw the reset is ignored.
					hs.send(frame.AppendData(nil, 1, true, []byte("late")))
					// The connection keeps serving.
					hs.send(frame.AppendHeaders(nil, 3, false, true, hs.post("/echo", "content-length", "5")))
					hs.send(frame.AppendData(nil, 3, true, []byte("hello")))
					if r := hs.response(3); r.status != "200" || string(r.body) != "hello" {
						t.Fatalf("follow-up request: %+v", r)
					}
					if hs.err != nil {
						t.Fatalf("connection ended: %v", hs.err)
					}
				})
			}
		})
	}
}

// TestMalformedAfterResponseStarted: a request found malformed after its
// handler answered (the body overruns content-length) is reset without a second
// response head.
func TestMalformedAfterResponseStarted(t *testing.T) {
	hs := newHarness(t, helloHandler(false), nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, false, true, hs.post("/", "content-length", "1")))
	r := hs.response(1) // the handler answers without reading the body
	if r.status != "200" {
		t.Fatalf("%+v", r)
	}
	hs.send(frame.AppendData(nil, 1, true, []byte("ab")))
	hs.expectRST(1, frame.ErrCodeProtocol)
}

// TestWhitespaceValueStdClient is the reported hang: net/http's client sends a
// header value with surrounding whitespace as is, and retries a request reset
// with PROTOCOL_ERROR for about a minute (golang/go#47635). It gets the 400 at
// once.
func TestWhitespaceValueStdClient(t *testing.T) {
	srv := startNetServer(t, helloHandler(false), nil)
	for name, cl := range map[string]*http.Client{"std": stdClient(), "x/net": xnetClient()} {
		t.Run(name, func(t *testing.T) {
			cl.Timeout = 5 * time.Second
			req, err := http.NewRequest("GET", "http://"+srv.addr()+"/x", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Padded", " v ")
			// Before the fix: "Client.Timeout exceeded while awaiting headers".
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 400 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			// The client's next request (on a new connection: PROTOCOL_ERROR makes
			// it drop this one) succeeds.
			resp, err = cl.Get("http://" + srv.addr() + "/y")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if !strings.HasPrefix(resp.Proto, "HTTP/2") {
				t.Fatalf("proto %s", resp.Proto)
			}
		})
	}
}

// TestMalformedFlood: the answers to malformed requests count as control frames
// queued on the peer's initiative; a peer sending them faster than the bound
// gets ENHANCE_YOUR_CALM.
func TestMalformedFlood(t *testing.T) {
	hs := newHarness(t, helloHandler(true), nil)
	// The peer reads nothing: its answers stay in the engine (no clock involved).
	hs.c.SetOutboundBuffered(func() int { return 1 })
	hs.handshake()
	block := hs.get("/", "x-a", " v")
	var b []byte
	id := uint32(1)
	for range maxControlFrames + 10 {
		b = frame.AppendHeaders(b, id, true, true, block)
		id += 2
	}
	hs.send(b)
	hs.expectGoAway(frame.ErrCodeEnhanceYourCalm)
}
