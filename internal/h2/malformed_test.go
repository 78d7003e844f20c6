package h2

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
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
		// §8.3.1: :authority and Host are uri-host [ ":" port ] without userinfo
		// (RFC 3986 §3.2), never empty.
		{name: "authority empty", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", ""}},
		{name: "authority inner SP", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "exa mple.com"}},
		{name: "authority userinfo", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "user:pass@example.com"}},
		{name: "authority userinfo no password", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "user@example.com"}},
		{name: "authority port letters", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "example.com:80a"}},
		{name: "authority port sign", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "example.com:+80"}},
		{name: "authority two ports", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "example.com:80:81"}},
		{name: "authority port only", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", ":80"}},
		{name: "authority HTAB inside", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "a\tb"}},
		{name: "authority CTL", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "a\x01b"}},
		{name: "authority DEL", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "a\x7fb"}},
		{name: "authority non-ASCII", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "ex\xc3\xa4mple.com"}},
		{name: "authority path", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "example.com/x"}},
		{name: "authority query", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "example.com?x"}},
		{name: "authority fragment", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "example.com#x"}},
		{name: "authority backslash", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "example.com\\evil"}},
		{name: "authority bad percent", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "ex%zzample.com"}},
		{name: "authority IPv6 unclosed", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "[::1"}},
		{name: "authority IPv6 junk after", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "[::1]x"}},
		{name: "authority IPv6 bad bytes", head: []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "[::g]"}},
		{name: "host empty", head: []string{":method", "GET", ":scheme", "http", ":path", "/", "host", ""}},
		{name: "host userinfo", head: []string{":method", "GET", ":scheme", "http", ":path", "/", "host", "user@example.com"}},
		{name: "host inner SP", head: []string{":method", "GET", ":scheme", "http", ":path", "/", "host", "a b"}},
		{name: "host bad port beside authority", head: get("host", "example.com:x")},
		{name: "CONNECT authority userinfo", head: []string{":method", "CONNECT", ":authority", "u@example.com:443"}},
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
	hs.c.setOutboundBuffered(func() int { return 1 })
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

// TestAuthorityAccepted: every form of uri-host [ ":" port ] (RFC 3986 §3.2) is
// accepted as :authority or, without one, as Host (RFC 9113 §8.3.1), and becomes
// the request's Host.
func TestAuthorityAccepted(t *testing.T) {
	for _, a := range []string{
		"example.com", "example.com:8080", "example.com:", "127.0.0.1:80", "localhost",
		"[::1]", "[::1]:443", "[2001:db8::7]:8443", "[::ffff:192.0.2.1]", "[v1.fe80::a+en1]:80",
		"ex%41mple.com", "xn--bcher-kva.example", "a-b_c~d!$&'()*+,;=", "EXAMPLE.COM:443",
	} {
		for _, name := range []string{":authority", "host"} {
			t.Run(name+" "+a, func(t *testing.T) {
				got := make(chan string, 1)
				hs := newHarness(t, handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
					got <- r.Host
					_ = w.WriteResponse(200, nil, nil)
				}}, nil)
				hs.handshake()
				hs.send(frame.AppendHeaders(nil, 1, true, true, hs.encode(":method", "GET", ":scheme", "http", ":path", "/", name, a)))
				if r := hs.response(1); r.status != "200" {
					t.Fatalf("%+v", r)
				}
				if h := <-got; h != a {
					t.Fatalf("Host %q, want %q", h, a)
				}
			})
		}
	}
}

// TestAuthorityVerdictCached: the authority check is part of the field verdicts
// the decode cache keeps, so a repeated block with a bad :authority, replayed
// from the cache without decoding or validating, is still refused; a good one
// replayed is still served.
func TestAuthorityVerdictCached(t *testing.T) {
	hs := newHarness(t, helloHandler(true), nil)
	hs.handshake()
	head := []string{":method", "GET", ":scheme", "http", ":path", "/", ":authority", "user@example.com"}
	// The first encoding indexes the fields; from the second on the block is
	// indexed references only (table-neutral), so the decoder caches it.
	hs.send(frame.AppendHeaders(nil, 1, true, true, hs.encode(head...)))
	hs.expectMalformed(1)
	bad := hs.encode(head...)
	hs.send(frame.AppendHeaders(nil, 3, true, true, bad))
	hs.expectMalformed(3)
	if !hs.c.dc.ok || string(hs.c.dc.block) != string(bad) {
		t.Fatal("the block was not cached")
	}
	for id := uint32(5); id <= 9; id += 2 {
		hs.send(frame.AppendHeaders(nil, id, true, true, bad))
		hs.expectMalformed(id)
		if !hs.c.dc.ok {
			t.Fatal("the cached block was decoded again")
		}
	}
	head[len(head)-1] = "example.com:8080"
	hs.send(frame.AppendHeaders(nil, 11, true, true, hs.encode(head...)))
	if r := hs.response(11); r.status != "200" {
		t.Fatalf("%+v", r)
	}
	good := hs.encode(head...)
	for id := uint32(13); id <= 17; id += 2 {
		hs.send(frame.AppendHeaders(nil, id, true, true, good))
		if r := hs.response(id); r.status != "200" {
			t.Fatalf("%d: %+v", id, r)
		}
	}
	if !hs.c.dc.ok || string(hs.c.dc.block) != string(good) {
		t.Fatal("the good block was not cached")
	}
}
