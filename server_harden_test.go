package celeris

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Hardening over real sockets: each attack on HTTP/1.1 framing (Host, targets,
// chunk syntax, Content-Length, trailers, unread bodies) is sent as raw bytes,
// and a request hidden where a lenient or desynchronised parser would find it
// must never be answered.

// smuggled is a complete request that must never be served when it hides in a body.
const smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"

// hardenServer serves routes on worker goroutines and inline, and counts the
// requests that reach /smuggled.
type hardenServer struct {
	addr     string
	smuggled atomic.Int64
}

func startHarden(t *testing.T, cfg Config, extra func(s *Server)) *hardenServer {
	t.Helper()
	hs := &hardenServer{}
	_, hs.addr = startServer(t, cfg, func(s *Server) {
		s.GET("/smuggled", func(c *Context) error {
			hs.smuggled.Add(1)
			return c.String(200, "SMUGGLED")
		})
		s.GET("/after", func(c *Context) error { return c.String(200, "after") })
		echo := func(c *Context) error {
			b, err := c.Body()
			if err != nil {
				return err
			}
			var tr strings.Builder
			c.VisitTrailers(func(n, v string) { fmt.Fprintf(&tr, "%s=%s;", n, v) })
			return c.String(200, string(b)+"|"+tr.String())
		}
		s.POST("/echo", echo)
		s.POST("/echo-inline", echo).Inline()
		// Reads the first 5 bytes of the body and answers without waiting for its
		// end, as a parser that stops at its own terminator does (a multipart
		// reader at its final boundary).
		s.POST("/first5", func(c *Context) error {
			var b [5]byte
			n, _ := io.ReadFull(c.BodyReader(), b[:])
			return c.String(200, string(b[:n])+"|")
		})
		// Handlers that never read the request body.
		s.GET("/get", func(c *Context) error { return c.String(200, "get") })
		s.GET("/get-inline", func(c *Context) error { return c.String(200, "get") }).Inline()
		s.POST("/redirect", func(c *Context) error { return c.Redirect(303, "/after") })
		s.POST("/redirect-inline", func(c *Context) error { return c.Redirect(303, "/after") }).Inline()
		deny := func(next HandlerFunc) HandlerFunc {
			return func(c *Context) error { return NewHTTPError(401, "denied") }
		}
		s.POST("/guarded", func(c *Context) error { return c.String(200, "in") }, deny)
		s.POST("/guarded-inline", func(c *Context) error { return c.String(200, "in") }, deny).Inline()
		s.POST("/refuse", func(c *Context) error { return NewHTTPError(417, "no") })
		if extra != nil {
			extra(s)
		}
	})
	t.Cleanup(func() {
		if n := hs.smuggled.Load(); n != 0 {
			t.Errorf("a request hidden in a body was served %d times", n)
		}
	})
	return hs
}

// expectAfter checks that the next answer on rc is the one to "GET /after": the
// connection kept serving.
func (rc *rawConn) expectAfter() {
	rc.t.Helper()
	resp := rc.readResponse("GET")
	if got := bodyString(rc.t, resp); resp.StatusCode != 200 || got != "after" {
		rc.t.Fatalf("next answer: %d %q, want 200 \"after\"", resp.StatusCode, got)
	}
}

// afterAnswer checks what follows an answer on rc: either the connection closed,
// or the request sent after the attack ("GET /after") is the next answer. Nothing
// else (no smuggled answer) may come.
func (rc *rawConn) afterAnswer(mustClose bool) {
	rc.t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := rc.br.Peek(1); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			rc.t.Fatal("connection neither closed nor answered the next request")
		}
		return // closed
	}
	if mustClose {
		rc.expectClosed()
		return
	}
	rc.expectAfter()
}

const after = "GET /after HTTP/1.1\r\nHost: x\r\n\r\n"

// RFC 9112 §3.2: a Host that is not uri-host [":" port], and an empty one, get 400
// and the connection closes (Host header confusion).
func TestH1HardenHost(t *testing.T) {
	hs := startHarden(t, Config{RefusalHeader: refusedHeader}, nil)
	for _, tc := range []struct{ name, req string }{
		{name: "port not digits", req: "GET /after HTTP/1.1\r\nHost: 127.0.0.1:80x\r\n\r\n"},
		{name: "port with sign", req: "GET /after HTTP/1.1\r\nHost: x:+80\r\n\r\n"},
		{name: "two ports", req: "GET /after HTTP/1.1\r\nHost: x:80:81\r\n\r\n"},
		{name: "empty", req: "GET /after HTTP/1.1\r\nHost:\r\n\r\n"},
		{name: "blank", req: "GET /after HTTP/1.1\r\nHost:   \r\n\r\n"},
		{name: "empty on 1.0", req: "GET /after HTTP/1.0\r\nHost: \r\n\r\n"},
		{name: "missing", req: "GET /after HTTP/1.1\r\n\r\n"},
		{name: "userinfo", req: "GET /after HTTP/1.1\r\nHost: user@x\r\n\r\n"},
		{name: "space inside", req: "GET /after HTTP/1.1\r\nHost: x y\r\n\r\n"},
		{name: "non-ASCII", req: "GET /after HTTP/1.1\r\nHost: \xc3\xa9\r\n\r\n"},
		{name: "bad pct-encoding", req: "GET /after HTTP/1.1\r\nHost: x%zz\r\n\r\n"},
		{name: "unclosed IPv6", req: "GET /after HTTP/1.1\r\nHost: [::1\r\n\r\n"},
		{name: "absolute-form port not digits", req: "GET http://x:80x/after HTTP/1.1\r\nHost: x\r\n\r\n"},
		{name: "absolute-form, Host invalid", req: "GET http://x/after HTTP/1.1\r\nHost: x:y\r\n\r\n"},
		{name: "CONNECT bad pct-encoding", req: "CONNECT x%zz:443 HTTP/1.1\r\nHost: x\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := dialRaw(t, hs.addr)
			rc.send(tc.req + smuggled)
			resp := rc.readResponse("GET")
			if resp.StatusCode != 400 || resp.Header.Get("X-Refused") != "400" {
				t.Fatalf("status %d (X-Refused %q), want a 400 refusal", resp.StatusCode, resp.Header.Get("X-Refused"))
			}
			rc.expectClosed()
		})
	}
	for _, host := range []string{"127.0.0.1:80", "[::1]:8080", "x:", "example.com"} {
		t.Run("valid "+host, func(t *testing.T) {
			rc := dialRaw(t, hs.addr)
			rc.send("GET /after HTTP/1.1\r\nHost: " + host + "\r\n\r\n" + after)
			for range 2 {
				if got := bodyString(t, rc.readResponse("GET")); got != "after" {
					t.Fatalf("body %q", got)
				}
			}
		})
	}
}

// RFC 9112 §7.1: a chunked message ends after the trailer section's final CRLF.
// The answer waits for it, and the connection goes on serving the next request.
func TestH1HardenTrailerWait(t *testing.T) {
	t.Parallel()
	hs := startHarden(t, Config{}, nil)
	head := func(path string) string {
		return "POST " + path + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
	}
	// /echo reads the body through a pipe on a worker, /echo-inline gets it
	// buffered, /first5 answers before the body ended.
	for _, path := range []string{"/echo", "/echo-inline", "/first5"} {
		for _, tc := range []struct {
			name, first, rest, want string
		}{
			{name: "empty trailer section", first: "5\r\nhello\r\n0\r\n", rest: "\r\n", want: "hello|"},
			{name: "final CR, then LF", first: "5\r\nhello\r\n0\r\n\r", rest: "\n", want: "hello|"},
			{name: "trailer field", first: "5\r\nhello\r\n0\r\nX-T: v\r\n", rest: "\r\n", want: "hello|X-T=v;"},
			{name: "last chunk alone", first: "0\r\n", rest: "\r\n", want: "|"},
			{name: "rest of the data later", first: "5\r\nhello\r\n", rest: "3\r\nabc\r\n0\r\n\r\n", want: "helloabc|"},
		} {
			if path == "/first5" {
				tc.want = tc.want[:min(5, strings.IndexByte(tc.want, '|'))] + "|"
			}
			t.Run(path+" "+tc.name, func(t *testing.T) {
				rc := dialRaw(t, hs.addr)
				rc.send(head(path) + tc.first)
				// Nothing is answered before the message ended.
				_ = rc.c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
				if b, err := rc.br.Peek(1); err == nil {
					t.Fatalf("answered before the end of the trailer section: %q...", b)
				}
				_ = rc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
				rc.send(tc.rest + after)
				resp := rc.readResponse("POST")
				if got := bodyString(t, resp); resp.StatusCode != 200 || got != tc.want || resp.Close {
					t.Fatalf("answer %d %q close=%v, want 200 %q", resp.StatusCode, got, resp.Close, tc.want)
				}
				rc.expectAfter()
			})
		}
		t.Run(path+" one byte at a time", func(t *testing.T) {
			rc := dialRaw(t, hs.addr)
			req := head(path) + "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-A: 1\r\nX-B: 2\r\n\r\n" + after
			rc.trickle(req)
			want := "abcde|X-A=1;X-B=2;"
			if path == "/first5" {
				want = "abcde|"
			}
			resp := rc.readResponse("POST")
			if got := bodyString(t, resp); resp.StatusCode != 200 || got != want || resp.Close {
				t.Fatalf("answer %d %q close=%v, want %q", resp.StatusCode, got, resp.Close, want)
			}
			rc.expectAfter()
		})
	}
}

// RFC 9110 §9.3.7, RFC 9112 §3.2.3, §3.2.4, §3: targets that are not paths, and
// methods no route implements.
func TestH1HardenTargets(t *testing.T) {
	hs := startHarden(t, Config{RefusalHeader: refusedHeader}, nil)
	t.Run("OPTIONS *", func(t *testing.T) {
		rc := dialRaw(t, hs.addr)
		rc.send("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n" + after)
		resp := rc.readResponse("OPTIONS")
		if resp.StatusCode != 200 || resp.Header.Get("Allow") != "GET, HEAD, OPTIONS, POST" || resp.ContentLength != 0 {
			t.Fatalf("%d Allow %q length %d", resp.StatusCode, resp.Header.Get("Allow"), resp.ContentLength)
		}
		rc.afterAnswer(false)
	})
	t.Run("CONNECT without a route", func(t *testing.T) {
		rc := dialRaw(t, hs.addr)
		rc.send("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n" + after)
		if resp := rc.readResponse("CONNECT"); resp.StatusCode != 501 {
			t.Fatalf("status %d, want 501", resp.StatusCode)
		}
		rc.afterAnswer(false)
	})
	for _, n := range []int{8, 20, 32} {
		// Longer than every registered method (OPTIONS, 7 bytes, is the longest
		// here): 501 from the router, and the connection goes on.
		t.Run(fmt.Sprintf("%d-byte method", n), func(t *testing.T) {
			rc := dialRaw(t, hs.addr)
			rc.send(strings.Repeat("A", n) + " /after HTTP/1.1\r\nHost: x\r\n\r\n" + after)
			if resp := rc.readResponse("GET"); resp.StatusCode != 501 {
				t.Fatalf("status %d, want 501", resp.StatusCode)
			}
			rc.afterAnswer(false)
		})
	}
	for _, n := range []int{33, 40, 1000, 100 << 10} {
		// Longer than the parser's limit: refused at once with 501, not 431,
		// without waiting for the rest of the request line (the long ones send
		// none of it).
		t.Run(fmt.Sprintf("%d-byte method refused", n), func(t *testing.T) {
			rc := dialRaw(t, hs.addr)
			if n < 1000 {
				rc.send(strings.Repeat("A", n) + " /after HTTP/1.1\r\nHost: x\r\n\r\n")
			} else {
				// The rest is sent while the answer is read: the server may close
				// before it took all, and then a write fails.
				go func() { _, _ = io.WriteString(rc.c, strings.Repeat("A", n)) }()
			}
			resp := rc.readResponse("GET")
			if resp.StatusCode != 501 || resp.Header.Get("X-Refused") != "501" {
				t.Fatalf("status %d (X-Refused %q), want a 501 refusal", resp.StatusCode, resp.Header.Get("X-Refused"))
			}
			rc.expectClosed()
		})
	}
	t.Run("unknown short method is still routed", func(t *testing.T) {
		rc := dialRaw(t, hs.addr)
		rc.send("BREW /after HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp := rc.readResponse("BREW"); resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Fatalf("status %d Allow %q, want 405", resp.StatusCode, resp.Header.Get("Allow"))
		}
	})
}

// An application takes authority-form CONNECT requests with a route registered for
// CONNECT; Any's CONNECT routes do not take them. OPTIONS * and the 501 answers
// pass through Use middleware like the 404.
func TestH1HardenConnectRoute(t *testing.T) {
	t.Parallel()
	var target atomic.Value
	hs := startHarden(t, Config{}, func(s *Server) {
		s.Use(func(next HandlerFunc) HandlerFunc {
			return func(c *Context) error {
				c.SetHeader("X-Mw", "1")
				return next(c)
			}
		})
		s.Any("/any", func(c *Context) error { return c.String(200, "any") })
		s.Handle(http.MethodConnect, "/", func(c *Context) error {
			target.Store(c.RequestURI() + "|" + c.Path())
			return c.String(403, "no tunnels")
		})
	})
	rc := dialRaw(t, hs.addr)
	rc.send("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
	resp := rc.readResponse("CONNECT")
	if got := bodyString(t, resp); resp.StatusCode != 403 || got != "no tunnels" || resp.Header.Get("X-Mw") != "1" {
		t.Fatalf("%d %q X-Mw %q", resp.StatusCode, got, resp.Header.Get("X-Mw"))
	}
	if got := target.Load(); got != "example.com:443|" {
		t.Fatalf("handler saw %q", got)
	}
	rc.send("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")
	resp = rc.readResponse("OPTIONS")
	if want := "CONNECT, DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT, TRACE"; resp.StatusCode != 200 || resp.Header.Get("Allow") != want || resp.Header.Get("X-Mw") != "1" {
		t.Fatalf("%d Allow %q, want %q; X-Mw %q", resp.StatusCode, resp.Header.Get("Allow"), want, resp.Header.Get("X-Mw"))
	}
	rc.send(strings.Repeat("Z", 12) + " /any HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp = rc.readResponse("GET"); resp.StatusCode != 501 || resp.Header.Get("X-Mw") != "1" {
		t.Fatalf("long method: %d X-Mw %q", resp.StatusCode, resp.Header.Get("X-Mw"))
	}

	// Only Any registered CONNECT: 501.
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.Any("/*path", func(c *Context) error { return c.String(200, "catch-all") })
	})
	rc = dialRaw(t, addr)
	rc.send("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
	if resp := rc.readResponse("CONNECT"); resp.StatusCode != 501 {
		t.Fatalf("CONNECT beside Any: %d, want 501", resp.StatusCode)
	}
}

func TestHandleLongMethodPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	New(Config{}).Handle(strings.Repeat("X", 33), "/", func(c *Context) error { return nil })
}

// "Funky chunks" (2025 chunk-line smuggling): a chunked body the grammar does not
// allow gets 400 and the connection closes; the request hidden inside, where a
// lenient parser would see the body end, is never served.
func TestH1HardenFunkyChunks(t *testing.T) {
	t.Parallel()
	hs := startHarden(t, Config{}, nil)
	n := fmt.Sprintf("%x", len(smuggled))
	flood := strings.Repeat("1;"+strings.Repeat("a", 100)+"\r\nx\r\n", 700)
	for _, tc := range []struct{ name, body string }{
		{name: "bare LF after size", body: "0\n\r\n" + smuggled},
		{name: "bare LF after last chunk", body: "5\r\nhello\r\n0\r\n\n" + smuggled},
		{name: "bare LF in extension", body: "2;a\n" + n + "\r\n" + smuggled + "\r\n0\r\n\r\n"},
		{name: "bare CR in extension", body: "5;a\rb\r\nhello\r\n0\r\n\r\n" + smuggled},
		{name: "bare LF after data", body: "5\r\nhello\n0\r\n\r\n" + smuggled},
		{name: "bare LF in trailer", body: "0\r\nX: y\n\r\n" + smuggled},
		{name: "bare LF ends trailer section", body: "0\r\n\n" + smuggled},
		{name: "empty extension", body: "5;\r\nhello\r\n0\r\n\r\n" + smuggled},
		{name: "invalid extension byte", body: "5;a@b\r\nhello\r\n0\r\n\r\n" + smuggled},
		{name: "space inside size", body: "0 " + n + "\r\n" + smuggled + "\r\n0\r\n\r\n"},
		{name: "leading space", body: " 0\r\n\r\n" + smuggled},
		{name: "plus", body: "+0\r\n\r\n" + smuggled},
		{name: "0x", body: "0x0\r\n\r\n" + smuggled},
		{name: "17 digits", body: "00000000000000000\r\n\r\n" + smuggled},
		{name: "data longer than size", body: "1\r\na" + smuggled + "\r\n0\r\n\r\n"},
		{name: "extension flood", body: flood + "0\r\n\r\n" + smuggled},
	} {
		for _, path := range []string{"/echo", "/echo-inline"} {
			t.Run(tc.name+" "+path, func(t *testing.T) {
				rc := dialRaw(t, hs.addr)
				rc.send("POST " + path + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + tc.body + after)
				resp := rc.readResponse("POST")
				if got := bodyString(t, resp); resp.StatusCode != 400 {
					t.Fatalf("status %d (%q), want 400", resp.StatusCode, got)
				}
				rc.expectClosed()
			})
		}
	}
}

// 0.CL and Expect desyncs (2025): a body the handler never reads is discarded or
// the connection closes; its bytes are never parsed as the next request. The body
// is itself a complete request.
func TestH1HardenUnreadBody(t *testing.T) {
	hs := startHarden(t, Config{}, nil)
	big := smuggled + strings.Repeat("z", 100<<10) // streams to worker routes (> 64 KiB)
	chunk := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(smuggled), smuggled)
	type body struct {
		name, head, data string
	}
	bodies := []body{
		{name: "small", head: fmt.Sprintf("Content-Length: %d\r\n", len(smuggled)), data: smuggled},
		{name: "large", head: fmt.Sprintf("Content-Length: %d\r\n", len(big)), data: big},
		{name: "chunked", head: "Transfer-Encoding: chunked\r\n", data: chunk},
	}
	routes := []struct {
		name, method, path string
		status             int
	}{
		{name: "GET with a body", method: "GET", path: "/get", status: 200},
		{name: "GET with a body, inline", method: "GET", path: "/get-inline", status: 200},
		{name: "404", method: "POST", path: "/missing", status: 404},
		{name: "405", method: "DELETE", path: "/get", status: 405},
		{name: "redirect", method: "POST", path: "/redirect", status: 303},
		{name: "redirect, inline", method: "POST", path: "/redirect-inline", status: 303},
		{name: "middleware refusal", method: "POST", path: "/guarded", status: 401},
		{name: "middleware refusal, inline", method: "POST", path: "/guarded-inline", status: 401},
		{name: "handler error", method: "POST", path: "/refuse", status: 417},
	}
	for _, rt := range routes {
		for _, b := range bodies {
			t.Run(rt.name+" "+b.name, func(t *testing.T) {
				rc := dialRaw(t, hs.addr)
				rc.send(rt.method + " " + rt.path + " HTTP/1.1\r\nHost: x\r\n" + b.head + "\r\n" + b.data + after)
				if resp := rc.readResponse(rt.method); resp.StatusCode != rt.status {
					t.Fatalf("status %d, want %d", resp.StatusCode, rt.status)
				}
				rc.afterAnswer(false)
			})
			// Expect: 100-continue, answered with a final status instead of 100.
			// A client (or a proxy) that sends the body anyway, at once or after
			// the answer, never has it read as a request.
			t.Run(rt.name+" "+b.name+" expect, body at once", func(t *testing.T) {
				rc := dialRaw(t, hs.addr)
				rc.send(rt.method + " " + rt.path + " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n" + b.head + "\r\n" + b.data + after)
				readFinal(t, rc, rt.method, rt.status)
				rc.afterAnswer(false)
			})
			t.Run(rt.name+" "+b.name+" expect, body after the answer", func(t *testing.T) {
				rc := dialRaw(t, hs.addr)
				rc.send(rt.method + " " + rt.path + " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n" + b.head + "\r\n")
				resp := rc.readResponse(rt.method)
				if resp.StatusCode == 100 {
					// Inline routes read the body before they run: no desync to
					// look for, but the exchange must still end right.
					rc.send(b.data + after)
					resp = rc.readResponse(rt.method)
				} else {
					// The write may fail once the server closed: that is one of
					// the two right outcomes.
					_, _ = io.WriteString(rc.c, b.data+after)
				}
				if resp.StatusCode != rt.status {
					t.Fatalf("status %d, want %d", resp.StatusCode, rt.status)
				}
				rc.afterAnswer(false)
			})
		}
	}
	t.Run("Expect other than 100-continue", func(t *testing.T) {
		rc := dialRaw(t, hs.addr)
		rc.send("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n" + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(smuggled)) + smuggled + after)
		if resp := rc.readResponse("POST"); resp.StatusCode != 417 {
			t.Fatalf("status %d, want 417", resp.StatusCode)
		}
		rc.expectClosed()
	})
}

// readFinal reads the answer to a request that expected 100-continue: an interim
// 100 may come first when the body was already read; the final status must be
// status.
func readFinal(t *testing.T, rc *rawConn, method string, status int) {
	t.Helper()
	for {
		resp := rc.readResponse(method)
		if resp.StatusCode == 100 {
			continue
		}
		if resp.StatusCode != status {
			t.Fatalf("status %d, want %d", resp.StatusCode, status)
		}
		return
	}
}

// RFC 9110 §8.6, RFC 9112 §6.3: a Content-Length that is not one number (a sign,
// inner whitespace, differing values) gets 400 and closes; the body is never a
// request.
func TestH1HardenContentLength(t *testing.T) {
	hs := startHarden(t, Config{RefusalHeader: refusedHeader}, nil)
	l := len(smuggled)
	for _, tc := range []struct{ name, cl string }{
		{name: "plus", cl: fmt.Sprintf("Content-Length: +%d\r\n", l)},
		{name: "minus", cl: "Content-Length: -0\r\n"},
		{name: "inner space", cl: fmt.Sprintf("Content-Length: %d %d\r\n", l/10, l%10)},
		{name: "differing list", cl: fmt.Sprintf("Content-Length: 0, %d\r\n", l)},
		{name: "differing fields", cl: fmt.Sprintf("Content-Length: 0\r\nContent-Length: %d\r\n", l)},
		{name: "hex", cl: fmt.Sprintf("Content-Length: 0x%x\r\n", l)},
	} {
		for _, path := range []string{"/echo", "/echo-inline"} {
			t.Run(tc.name+" "+path, func(t *testing.T) {
				rc := dialRaw(t, hs.addr)
				rc.send("POST " + path + " HTTP/1.1\r\nHost: x\r\n" + tc.cl + "\r\n" + smuggled + after)
				resp := rc.readResponse("POST")
				if resp.StatusCode != 400 || resp.Header.Get("X-Refused") != "400" {
					t.Fatalf("status %d (X-Refused %q), want a 400 refusal", resp.StatusCode, resp.Header.Get("X-Refused"))
				}
				rc.expectClosed()
			})
		}
	}
}

// A body its handler left unread on a worker is read and dropped after the handler
// returned, up to 256 KiB, and the connection goes on; a larger rest closes it.
func TestH1HardenUnreadBodyDiscarded(t *testing.T) {
	hs := startHarden(t, Config{MaxRequestBodySize: 8 << 20}, func(s *Server) {
		// With Use middleware the 404 and 405 answers run on workers too.
		s.Use(func(next HandlerFunc) HandlerFunc { return next })
	})
	large := smuggled + strings.Repeat("z", 200<<10)
	chunked := fmt.Sprintf("%x\r\n%s\r\n", len(smuggled), smuggled)
	for range 20 {
		chunked += fmt.Sprintf("%x\r\n%s\r\n", 10<<10, strings.Repeat("c", 10<<10))
	}
	chunked += "0\r\nX-T: 1\r\n\r\n"
	for _, rt := range []struct {
		method, path string
		status       int
	}{
		{method: "GET", path: "/get", status: 200},
		{method: "POST", path: "/missing", status: 404},
		{method: "DELETE", path: "/get", status: 405},
		{method: "POST", path: "/redirect", status: 303},
		{method: "POST", path: "/guarded", status: 401},
		{method: "POST", path: "/refuse", status: 417},
		{method: "POST", path: "/first5", status: 200},
	} {
		for _, b := range []struct{ name, head, data string }{
			{name: "content-length", head: fmt.Sprintf("Content-Length: %d\r\n", len(large)), data: large},
			{name: "chunked", head: "Transfer-Encoding: chunked\r\n", data: chunked},
		} {
			t.Run(rt.method+" "+rt.path+" "+b.name, func(t *testing.T) {
				rc := dialRaw(t, hs.addr)
				rc.send(rt.method + " " + rt.path + " HTTP/1.1\r\nHost: x\r\n" + b.head + "\r\n" + b.data + after)
				resp := rc.readResponse(rt.method)
				if resp.StatusCode != rt.status || resp.Close {
					t.Fatalf("status %d close=%v, want %d and the connection kept", resp.StatusCode, resp.Close, rt.status)
				}
				rc.expectAfter()
			})
		}
		t.Run(rt.method+" "+rt.path+" too large to discard", func(t *testing.T) {
			rc := dialRaw(t, hs.addr)
			huge := smuggled + strings.Repeat("z", 1<<20)
			go func() {
				_, _ = io.WriteString(rc.c, rt.method+" "+rt.path+" HTTP/1.1\r\nHost: x\r\n"+
					fmt.Sprintf("Content-Length: %d\r\n\r\n", len(huge))+huge+after)
			}()
			resp := rc.readResponse(rt.method)
			if resp.StatusCode != rt.status || !resp.Close {
				t.Fatalf("status %d close=%v, want %d and Connection: close", resp.StatusCode, resp.Close, rt.status)
			}
			rc.expectClosed()
		})
	}
}

// OPTIONS * and a method longer than every route's are answered by the Server,
// whichever protocol carries them.
func TestTargetsBothProtocols(t *testing.T) {
	t.Parallel()
	hs := startHarden(t, Config{}, nil)
	forEachProto(t, func(t *testing.T, c *http.Client, proto string) {
		req, err := http.NewRequest(http.MethodOptions, "http://"+hs.addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Opaque = "*"
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		wantProto(t, resp, proto)
		if resp.StatusCode != 200 || resp.Header.Get("Allow") != "GET, HEAD, OPTIONS, POST" {
			t.Fatalf("OPTIONS *: %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
		}
		resp.Body.Close()
		req, _ = http.NewRequest(strings.Repeat("Q", 20), "http://"+hs.addr+"/after", nil)
		if resp, err = c.Do(req); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 501 {
			t.Fatalf("long method: %d", resp.StatusCode)
		}
		resp.Body.Close()
	})
}
