package celeris

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/internal/testkit"
)

// Regression tests for the 2025-26 CVE classes of HTTP servers, one table per
// class, each row run on every protocol and transport it applies to, over real
// sockets: HTTP/1.1 in cleartext on each engine and over TLS; HTTP/2 by prior
// knowledge on each engine, by the h2c upgrade, and over TLS (ALPN h2). HTTP/3
// has its own tests in the http3 module (QPACK bounds).

// cveHeaderTimeout is the read-header timeout of these servers: short, so that a
// connection held past it shows within the test's deadline.
const cveHeaderTimeout = 400 * time.Millisecond

// cveTarget dials one connection to a server of the table, speaking proto
// ("h1" or "h2") from its first byte (TLS done, ALPN chosen).
type cveTarget struct {
	name string
	dial func(t *testing.T) net.Conn
}

// cveTargets starts a server per engine with a TLS listener and returns the
// targets for proto: cleartext on each engine, and TLS once (the TLS listener is
// always the std engine).
func cveTargets(t *testing.T, proto string, register func(*Server)) []cveTarget {
	t.Helper()
	var out []cveTarget
	for i, eng := range []Engine{EngineAuto, EngineStd} {
		_, plain, secure := startTLSServer(t, Config{Engine: eng, ReadHeaderTimeout: cveHeaderTimeout}, register)
		out = append(out, cveTarget{name: "plain-" + string(engineOr(eng)), dial: func(t *testing.T) net.Conn {
			nc, err := net.DialTimeout("tcp", plain, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { nc.Close() })
			_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
			return nc
		}})
		if i > 0 {
			continue
		}
		alpn := "http/1.1"
		if proto == "h2" {
			alpn = "h2"
		}
		out = append(out, cveTarget{name: "tls-" + alpn, dial: func(t *testing.T) net.Conn {
			d := &net.Dialer{Timeout: 5 * time.Second}
			nc, err := tls.DialWithDialer(d, "tcp", secure, &tls.Config{RootCAs: testCert().Pool(), ServerName: "localhost", NextProtos: []string{alpn}})
			if err != nil {
				t.Fatal(err)
			}
			if got := nc.ConnectionState().NegotiatedProtocol; got != alpn {
				t.Fatalf("ALPN chose %q, want %q", got, alpn)
			}
			t.Cleanup(func() { nc.Close() })
			_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
			return nc
		}})
	}
	return out
}

func engineOr(e Engine) Engine {
	if e == EngineAuto {
		return "auto"
	}
	return e
}

// h2Frames reads frames until the connection ends and returns them; read errors
// other than the end of the connection fail the test.
func h2Frames(t *testing.T, r io.Reader) []http2.Frame {
	t.Helper()
	fr := http2.NewFramer(nil, r)
	var out []http2.Frame
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("connection still open after its deadline; frames so far %v", frameTypes(out))
			}
			return out
		}
		if ga, ok := f.(*http2.GoAwayFrame); ok {
			// The debug data is only valid until the next read.
			cp := *ga
			out = append(out, &cp)
			continue
		}
		out = append(out, f)
	}
}

func frameTypes(fs []http2.Frame) []string {
	var s []string
	for _, f := range fs {
		s = append(s, f.Header().Type.String())
	}
	return s
}

// goAwayCode returns the code of the GOAWAY among fs, and false without one.
func goAwayCode(fs []http2.Frame) (http2.ErrCode, bool) {
	for _, f := range fs {
		if ga, ok := f.(*http2.GoAwayFrame); ok {
			return ga.ErrCode, true
		}
	}
	return 0, false
}

// TestCVEPrefaceWithoutSettings: a client that sends the connection preface's
// magic and then no SETTINGS frame (RFC 9113 §3.4) is closed within the
// read-header timeout with GOAWAY SETTINGS_TIMEOUT (RFC 9113 §6.5.3: the
// server's SETTINGS went unacknowledged), instead of being held for the idle
// timeout; likewise after an h2c upgrade whose client never sends the preface's
// SETTINGS. net/http closes such a connection after 2 s, without GOAWAY.
func TestCVEPrefaceWithoutSettings(t *testing.T) {
	t.Parallel()
	targets := cveTargets(t, "h2", testRoutes)
	for _, tg := range targets {
		for _, upgrade := range []bool{false, true} {
			if upgrade && strings.HasPrefix(tg.name, "tls") {
				continue // RFC 9113 §3.2: no h2c upgrade over TLS
			}
			name := tg.name
			if upgrade {
				name += "/upgrade"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				nc := tg.dial(t)
				var r io.Reader = nc
				if upgrade {
					io.WriteString(nc, "GET /bench HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: \r\n\r\n")
					br := bufio.NewReader(nc)
					resp, err := http.ReadResponse(br, nil)
					if err != nil || resp.StatusCode != 101 {
						t.Fatalf("upgrade: %v %v", resp, err)
					}
					r = br
				}
				start := time.Now()
				io.WriteString(nc, http2.ClientPreface)
				fs := h2Frames(t, r)
				took := time.Since(start)
				code, ok := goAwayCode(fs)
				if !ok || code != http2.ErrCodeSettingsTimeout {
					t.Fatalf("frames %v (GOAWAY %v %v), want GOAWAY SETTINGS_TIMEOUT", frameTypes(fs), ok, code)
				}
				if took > cveHeaderTimeout+3*time.Second {
					t.Fatalf("closed after %v, read-header timeout %v", took, cveHeaderTimeout)
				}
			})
		}
	}
}

// TestCVESettingsInTime: a client whose SETTINGS follow the magic a moment
// later (once the server's SETTINGS came), within the read-header timeout, is served, and still is after the
// timeout passed (the timer stopped with its SETTINGS).
func TestCVESettingsInTime(t *testing.T) {
	t.Parallel()
	for _, tg := range cveTargets(t, "h2", testRoutes) {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			nc := tg.dial(t)
			io.WriteString(nc, http2.ClientPreface)
			fr := http2.NewFramer(nc, nc)
			fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
			// The client's SETTINGS come late: after the server's own, once
			// its timer for them runs.
			if f, err := fr.ReadFrame(); err != nil {
				t.Fatal(err)
			} else if sf, ok := f.(*http2.SettingsFrame); !ok || sf.IsAck() {
				t.Fatalf("the server's first frame is %v, want its SETTINGS", f)
			}
			if err := fr.WriteSettings(); err != nil {
				t.Fatal(err)
			}
			if err := fr.WriteSettingsAck(); err != nil {
				t.Fatal(err)
			}
			h2Request(t, fr, 1, "/bench")
			if got := h2Status(t, fr, 1); got != "200" {
				t.Fatalf("answer %s, want 200", got)
			}
			testkit.Window(cveHeaderTimeout * 2) // a sleep: past the timeout, nothing may fire, which no event shows
			h2Request(t, fr, 3, "/bench")
			if got := h2Status(t, fr, 3); got != "200" {
				t.Fatalf("after the timeout: answer %s, want 200", got)
			}
		})
	}
}

// TestCVEPartialPreface: a client that sends part of the preface, or nothing,
// and stops is closed within the read-header timeout (net/http: 10 s for the
// magic).
func TestCVEPartialPreface(t *testing.T) {
	t.Parallel()
	targets := cveTargets(t, "h2", testRoutes)
	for _, sent := range []int{0, 10} {
		for _, tg := range targets {
			t.Run(fmt.Sprintf("%s/%d", tg.name, sent), func(t *testing.T) {
				t.Parallel()
				nc := tg.dial(t)
				start := time.Now()
				io.WriteString(nc, http2.ClientPreface[:sent])
				_ = nc.SetReadDeadline(time.Now().Add(cveHeaderTimeout + 3*time.Second))
				_, err := io.Copy(io.Discard, nc)
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Fatalf("partial preface held open for %v", time.Since(start))
				}
			})
		}
	}
}

// h2Open sends the preface with settings and returns a framer over nc.
func h2Open(t *testing.T, nc net.Conn, settings ...http2.Setting) *http2.Framer {
	t.Helper()
	io.WriteString(nc, http2.ClientPreface)
	fr := http2.NewFramer(nc, nc)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := fr.WriteSettings(settings...); err != nil {
		t.Fatal(err)
	}
	return fr
}

// h2Request writes a GET for path on stream id with extra fields.
func h2Request(t *testing.T, fr *http2.Framer, id uint32, path string, extra ...hpack.HeaderField) {
	t.Helper()
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range append([]hpack.HeaderField{
		{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: "x"}, {Name: ":path", Value: path},
	}, extra...) {
		_ = enc.WriteField(f)
	}
	b := block.Bytes()
	first := min(len(b), 16384)
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: b[:first], EndStream: true, EndHeaders: first == len(b)}); err != nil {
		t.Fatal(err)
	}
	for b = b[first:]; len(b) > 0; {
		n := min(len(b), 16384)
		if err := fr.WriteContinuation(id, n == len(b), b[:n]); err != nil {
			t.Fatal(err)
		}
		b = b[n:]
	}
}

// h2Status reads frames until stream id's response HEADERS and returns its
// :status, or the GOAWAY code that ended the connection first ("GOAWAY CODE").
// fr decodes header blocks (ReadMetaHeaders).
func h2Status(t *testing.T, fr *http2.Framer, id uint32) string {
	t.Helper()
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("no answer on stream %d: %v", id, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.GoAwayFrame:
			return "GOAWAY " + f.ErrCode.String()
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				return "RST_STREAM " + f.ErrCode.String()
			}
		case *http2.MetaHeadersFrame:
			if f.StreamID == id {
				return f.PseudoValue("status")
			}
		}
	}
}

// TestCVEOversizedHeads: every request line or header block over the limit gets
// its answer before the close: HTTP/1.1 414 for a request-target over
// MaxURILength, however long the line runs before it ends (a line longer than
// what the server reads at once was closed without an answer), 431 for a header
// section over MaxHeaderBytes; HTTP/2 431 for a header list over
// SETTINGS_MAX_HEADER_LIST_SIZE (RFC 9113 §10.5.1), GOAWAY ENHANCE_YOUR_CALM for
// a block so large that it is a flood (CVE-2024-27316, CONTINUATION flood).
func TestCVEOversizedHeads(t *testing.T) {
	t.Parallel()
	t.Run("h1", func(t *testing.T) {
		t.Parallel()
		cases := []struct {
			name string
			req  func() string
			want string
		}{
			{name: "target 9KiB", want: "414", req: func() string { return "GET /" + strings.Repeat("a", 9<<10) + " HTTP/1.1\r\nHost: x\r\n\r\n" }},
			{name: "target 60KiB", want: "414", req: func() string { return "GET /" + strings.Repeat("a", 60<<10) + " HTTP/1.1\r\nHost: x\r\n\r\n" }},
			{name: "target 70KiB", want: "414", req: func() string { return "GET /" + strings.Repeat("a", 70<<10) + " HTTP/1.1\r\nHost: x\r\n\r\n" }},
			{name: "target 1MiB", want: "414", req: func() string { return "GET /" + strings.Repeat("a", 1<<20) + " HTTP/1.1\r\nHost: x\r\n\r\n" }},
			{name: "target 1MiB unended", want: "414", req: func() string { return "GET /" + strings.Repeat("a", 1<<20) }},
			{name: "field 70KiB", want: "431", req: func() string { return "GET / HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 70<<10) + "\r\n\r\n" }},
			{name: "field 1MiB", want: "431", req: func() string { return "GET / HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 1<<20) + "\r\n\r\n" }},
			{name: "many fields", want: "431", req: func() string {
				return "GET / HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-A: b\r\n", 20000) + "\r\n"
			}},
		}
		for _, tg := range cveTargets(t, "h1", testRoutes) {
			for _, tc := range cases {
				t.Run(tg.name+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
					nc := tg.dial(t)
					go io.WriteString(nc, tc.req()) // the server answers before it read all
					resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
					if err != nil {
						t.Fatalf("no answer: %v", err)
					}
					if got := resp.Status[:3]; got != tc.want {
						t.Fatalf("status %s, want %s", resp.Status, tc.want)
					}
				})
			}
		}
	})
	t.Run("h2", func(t *testing.T) {
		t.Parallel()
		cases := []struct {
			name  string
			field hpack.HeaderField
			many  int // the field this many times (indexed after the first)
			want  string
		}{
			{name: "field 70KiB", field: hpack.HeaderField{Name: "x", Value: strings.Repeat("a", 70<<10)}, want: "431"},
			{name: "field 200KiB", field: hpack.HeaderField{Name: "x", Value: strings.Repeat("a", 200<<10)}, want: "GOAWAY ENHANCE_YOUR_CALM"},
			{name: "many fields", many: 3000, field: hpack.HeaderField{Name: "x-a", Value: "b"}, want: "431"},
		}
		for _, tg := range cveTargets(t, "h2", testRoutes) {
			for _, tc := range cases {
				t.Run(tg.name+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
					fr := h2Open(t, tg.dial(t))
					fields := []hpack.HeaderField{tc.field}
					for range tc.many {
						fields = append(fields, tc.field)
					}
					h2Request(t, fr, 1, "/bench", fields...)
					if got := h2Status(t, fr, 1); got != tc.want {
						t.Fatalf("answer %s, want %s", got, tc.want)
					}
				})
			}
		}
	})
}

// TestCVEChunkSizeBareLF: a chunk-size line (or the CRLF after chunk data)
// ended by a bare LF is refused with 400 (RFC 9112 §7.1: chunk-size ... CRLF;
// CVE-2025-22871, net/http's request smuggling through a bare LF), and a request
// hidden after it is never served.
func TestCVEChunkSizeBareLF(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, body string }{
		{name: "size LF", body: "5\nhello\r\n0\r\n\r\n"},
		{name: "size ext LF", body: "5;a=b\nhello\r\n0\r\n\r\n"},
		{name: "data LF", body: "5\r\nhello\n0\r\n\r\n"},
		{name: "last chunk LF", body: "5\r\nhello\r\n0\n\r\n"},
		{name: "smuggle", body: "2;\nxx\r\n45\r\n0\r\n\r\n" + smuggled},
	}
	var hs *hardenServer
	targets := cveTargets(t, "h1", func(s *Server) {
		s.GET("/smuggled", func(c *Context) error {
			hs.smuggled.Add(1)
			return c.String(200, "SMUGGLED")
		})
		s.POST("/echo", func(c *Context) error {
			b, err := c.Body()
			if err != nil {
				return err
			}
			return c.String(200, string(b))
		})
	})
	hs = &hardenServer{}
	t.Cleanup(func() {
		if n := hs.smuggled.Load(); n != 0 {
			t.Errorf("a request hidden in a body was served %d times", n)
		}
	})
	for _, tg := range targets {
		for _, tc := range cases {
			t.Run(tg.name+"/"+tc.name, func(t *testing.T) {
				nc := tg.dial(t)
				io.WriteString(nc, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"+tc.body)
				br := bufio.NewReader(nc)
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("no answer: %v", err)
				}
				if resp.StatusCode != 400 {
					t.Fatalf("status %s, want 400", resp.Status)
				}
				io.Copy(io.Discard, resp.Body)
				if _, err := http.ReadResponse(br, nil); err == nil {
					t.Fatal("a second answer came after the 400")
				}
			})
		}
	}
}

// TestCVEUnknownFrameTypes: frames of the types 0x0a-0x0f (ALTSVC, ORIGIN and
// types this server does not implement) are ignored on stream 0 and on a
// stream (RFC 9113 §5.5: "Implementations MUST ignore and discard frames of
// unknown types"), and the connection serves on; inside a header block they are
// a connection error PROTOCOL_ERROR (RFC 9113 §6.10).
func TestCVEUnknownFrameTypes(t *testing.T) {
	t.Parallel()
	for _, tg := range cveTargets(t, "h2", testRoutes) {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			fr := h2Open(t, tg.dial(t))
			for typ := http2.FrameType(0x0a); typ <= 0x0f; typ++ {
				for _, id := range []uint32{0, 1, 3} {
					if err := fr.WriteRawFrame(typ, 0xff, id, bytes.Repeat([]byte{0xa5}, 64)); err != nil {
						t.Fatal(err)
					}
				}
			}
			h2Request(t, fr, 1, "/bench")
			if got := h2Status(t, fr, 1); got != "200" {
				t.Fatalf("answer %s after unknown frames, want 200", got)
			}
		})
		t.Run(tg.name+"/in-header-block", func(t *testing.T) {
			t.Parallel()
			fr := h2Open(t, tg.dial(t))
			var block bytes.Buffer
			enc := hpack.NewEncoder(&block)
			for _, f := range []hpack.HeaderField{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"}, {Name: ":authority", Value: "x"}, {Name: ":path", Value: "/bench"}} {
				_ = enc.WriteField(f)
			}
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndStream: true})
			_ = fr.WriteRawFrame(0x0b, 0, 1, []byte("x"))
			if got := h2Status(t, fr, 1); got != "GOAWAY PROTOCOL_ERROR" {
				t.Fatalf("answer %s, want GOAWAY PROTOCOL_ERROR", got)
			}
		})
	}
}

// TestCVEMaxFrameSizeZero: SETTINGS_MAX_FRAME_SIZE below 16384 (0 here) is a
// connection error PROTOCOL_ERROR (RFC 9113 §6.5.2), in the preface's SETTINGS
// and in a later one; a server that took it would frame nothing, or loop.
func TestCVEMaxFrameSizeZero(t *testing.T) {
	t.Parallel()
	for _, tg := range cveTargets(t, "h2", testRoutes) {
		for _, later := range []bool{false, true} {
			name := tg.name + "/preface"
			if later {
				name = tg.name + "/later"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				nc := tg.dial(t)
				zero := http2.Setting{ID: http2.SettingMaxFrameSize, Val: 0}
				var fr *http2.Framer
				if later {
					fr = h2Open(t, nc)
					if err := fr.WriteSettings(zero); err != nil {
						t.Fatal(err)
					}
				} else {
					fr = h2Open(t, nc, zero)
				}
				h2Request(t, fr, 1, "/bench")
				fs := h2Frames(t, nc)
				code, ok := goAwayCode(fs)
				if !ok || code != http2.ErrCodeProtocol {
					t.Fatalf("frames %v (GOAWAY %v %v), want GOAWAY PROTOCOL_ERROR", frameTypes(fs), ok, code)
				}
			})
		}
	}
}
