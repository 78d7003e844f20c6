package celeris

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/httpfield"
	"github.com/celeris-dev/celeris/internal/h1"
	"github.com/celeris-dev/celeris/internal/h2raw"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// The field rules are written once (package httpfield) and applied by every
// writer: FuzzFieldVerdicts gives the same response field, as a header and as a
// trailer, to the HTTP/1.1 writer (directly, with and without its cache, and
// over a socket), to HTTP/2 (over a socket), to the net/http adapter (both
// protocols) and to Hijack's 101 head, and requires each to send it exactly
// when httpfield says so, unchanged. The adapter first rewrites CR and LF in a
// value to spaces, as net/http does; its verdict is the rules' on the value so
// rewritten. HTTP/3's writer has the same test in the http3 module
// (FuzzFieldVerdictsH3).

// fieldUnderTest is the field the routes of FuzzFieldVerdicts set.
var fieldUnderTest atomic.Pointer[[2]string]

// writerOwned reports names a writer sets or drops on its own (framing, Date,
// connection-specific fields, the fields the test's routes send), whose
// verdict is not the field rules' alone.
func writerOwned(name string) bool {
	switch strings.ToLower(name) {
	case "content-length", "content-type", "date", "te", "trailer", "vary", "server":
		return true
	}
	return httpfield.ConnectionSpecific(name)
}

// fieldSeeds are RFC 9110 §5.1 and §5.5 cases on both sides of each rule.
var fieldSeeds = [][2]string{
	{"X-Ok", "fine\tvalue"},
	{"x-lower", "caf\xc3\xa9 obs-text \x80\xff"},
	{"X-Ctl", "bell\x07"},
	{"X-Empty", ""},
	{"!#$%&'*+-.^_`|~09", "v"},
	{"X-Long-Value", strings.Repeat("a", 100)},
	{"X-Huge", strings.Repeat("h", 5000)}, // a line longer than a read buffer
	{"Bad Name", "v"},
	{"X:y", "v"},
	{"", "v"},
	{":status", "500"},
	{"X-Nul", "a\x00b"},
	{"X-CRLF", "a\r\nInjected: 1"},
	{"X-LF", strings.Repeat("b", 20) + "\nInjected: 1"},
	{"X-CR", "a\rb"},
	{"X\x00Nul", "v"},
	{"X\r\nSplit", "v"},
	{"caf\xc3\xa9", "v"},
	{"Set-Cookie", "a=b"},
	{"Cache-Control", "no-store"},
	{"X-Checksum", "abc"},
}

// sanitized is the value the adapter sends for v (sanitizeFieldValue).
func sanitized(v string) string { return sanitizeFieldValue(v) }

func FuzzFieldVerdicts(f *testing.F) {
	for _, s := range fieldSeeds {
		f.Add(s[0], s[1])
	}
	_, addr := startServer(f, Config{}, func(s *Server) {
		s.GET("/field", func(c *Context) error {
			fv := fieldUnderTest.Load()
			c.SetHeader(fv[0], fv[1])
			c.SetTrailer(fv[0], fv[1])
			return c.String(200, "x")
		})
		s.GET("/field-adapt", Adapt(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fv := fieldUnderTest.Load()
			w.Header()[fv[0]] = []string{fv[1]} // as set, not canonicalised
			io.WriteString(w, "x")
		})))
	})
	f.Fuzz(func(t *testing.T, name, value string) {
		if writerOwned(name) {
			return
		}
		fieldUnderTest.Store(&[2]string{name, value})
		want := httpfield.ValidResponseField(name, value)
		wantTrailer := want && !httpfield.ForbiddenTrailer(name)
		line := "\r\n" + name + ": " + value + "\r\n"
		fields := []httpmsg.Field{{Name: name, Value: value}}
		check := func(writer string, sent, want bool) {
			t.Helper()
			if sent != want {
				t.Fatalf("%s: field %q: %q sent %v, the rules say %v", writer, name, value, sent, want)
			}
		}

		// HTTP/1.1's writer, directly.
		check("h1 AppendHead", bytes.Contains(h1.AppendHead(nil, 200, fields, 0, false, false), []byte(line)), want)
		var vc h1.ValidCache
		for range 2 { // the cache's first and second sight
			check("h1 AppendHeadCached", bytes.Contains(h1.AppendHeadCached(nil, 200, fields, 0, false, false, &vc), []byte(line)), want)
		}
		check("h1 AppendLastChunk", bytes.Contains(h1.AppendLastChunk([]byte("\r\n"), fields), []byte(line)), wantTrailer)

		// Hijack's 101 head (adapter rules: CR and LF rewritten first).
		sv := sanitized(value)
		wantAdapt := httpfield.ValidResponseField(name, sv)
		head := appendSwitchingHead(nil, &Context{}, http.Header{name: {value}})
		check("Hijack 101 head", bytes.Contains(head, []byte("\r\n"+name+": "+sv+"\r\n")), wantAdapt)

		// Over sockets: HTTP/1.1 and HTTP/2, a handler and an adapted one.
		check("h1 socket", bytes.Contains(h1Head(t, addr, "/field"), []byte(line)), want)
		check("h1 socket adapter", bytes.Contains(h1Head(t, addr, "/field-adapt"), []byte("\r\n"+name+": "+sv+"\r\n")), wantAdapt)
		hdr, tr := h2Fields(t, addr, "/field")
		check("h2 socket", has(hdr, name, value), want)
		check("h2 socket trailer", has(tr, name, value), wantTrailer)
		hdr, _ = h2Fields(t, addr, "/field-adapt")
		check("h2 socket adapter", has(hdr, name, sv), wantAdapt)
	})
}

// h1Head sends GET path and returns the response head, from its status line to
// its empty line, with a CRLF in front so that every field line follows one.
func h1Head(t *testing.T, addr, path string) []byte {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(nc, "GET "+path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	br := bufio.NewReader(nc)
	head := []byte("\r\n")
	for {
		l, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("response head: %v", err)
		}
		head = append(head, l...)
		if string(l) == "\r\n" {
			return head
		}
	}
}

// h2Fields sends GET path over h2c and returns the response's header and
// trailer fields as pairs.
func h2Fields(t *testing.T, addr, path string) (hdr, tr [][2]string) {
	t.Helper()
	frames, err := h2raw.Do(addr, "GET", path, nil)
	if err != nil {
		t.Fatalf("h2: %v", err) // also when a field is not valid on the wire
	}
	seen := 0
	for _, fr := range frames {
		if fr.Type != "HEADERS" {
			continue
		}
		var out [][2]string
		for _, f := range fr.Fields {
			out = append(out, [2]string{f.Name, f.Value})
		}
		if seen == 0 {
			hdr = out
		} else {
			tr = out
		}
		seen++
	}
	return hdr, tr
}

// has reports whether fields hold name (in lower case, as HTTP/2 sends it)
// with value.
func has(fields [][2]string, name, value string) bool {
	for _, f := range fields {
		if f[0] == strings.ToLower(name) && f[1] == value {
			return true
		}
	}
	return false
}

// TestHijackHeadFieldRules: over a socket, the 101 head an adapted handler
// writes before Hijack leaves out the fields every writer drops (a value with
// NUL or another control character, a name that is not a token) and keeps the
// others, a CR or LF rewritten to a space as net/http does.
func TestHijackHeadFieldRules(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/switch", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h["Upgrade"] = []string{"echo"}
			h["Connection"] = []string{"Upgrade"}
			h["X-Nul"] = []string{"a\x00b"}
			h["X-Bell"] = []string{"a\x07b"}
			h["Bad Name"] = []string{"v"}
			h["X-Folded"] = []string{"a\r\n b"}
			h["X-Ok"] = []string{"fine"}
			w.WriteHeader(http.StatusSwitchingProtocols)
			nc, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				nc.Close()
			}
		}))
	})
	head := string(h1Head(t, addr, "/switch"))
	if !strings.HasPrefix(head, "\r\nHTTP/1.1 101 ") {
		t.Fatalf("head %q", head)
	}
	for _, want := range []string{"\r\nUpgrade: echo\r\n", "\r\nX-Ok: fine\r\n", "\r\nX-Folded: a   b\r\n"} {
		if !strings.Contains(head, want) {
			t.Errorf("head %q lacks %q", head, want)
		}
	}
	for _, bad := range []string{"X-Nul", "X-Bell", "Bad Name"} {
		if strings.Contains(head, bad) {
			t.Errorf("head %q has %q", head, bad)
		}
	}
}
