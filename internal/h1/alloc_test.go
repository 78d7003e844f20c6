//go:build !race

package h1

import (
	"testing"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// Allocation budgets (DESIGN.md "Memory"): the h1 hot paths allocate nothing.

var get10 = []byte("GET /api/v1/users/12345?fields=name,email HTTP/1.1\r\n" +
	"Host: api.example.com\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36\r\n" +
	"Accept: application/json, text/plain, */*\r\n" +
	"Accept-Language: en-US,en;q=0.9\r\n" +
	"Accept-Encoding: gzip, deflate, br\r\n" +
	"Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30.abc\r\n" +
	"Cookie: session=0123456789abcdef; theme=dark\r\n" +
	"Referer: https://example.com/dashboard\r\n" +
	"Connection: keep-alive\r\n" +
	"X-Request-Id: 7f3c9a1e-2b4d-4e8f-9a0b-1c2d3e4f5a6b\r\n" +
	"\r\n")

func TestAllocsParseHead(t *testing.T) {
	var r Request
	a := testing.AllocsPerRun(100, func() {
		if _, err := ParseHead(get10, &r, nil); err != nil {
			t.Fatal(err)
		}
	})
	if a != 0 || len(r.Headers) != 10 {
		t.Fatalf("%v allocs per ParseHead, %d headers", a, len(r.Headers))
	}
	// Rebase onto a copy, as a connection does, allocates nothing either.
	cp := make([]byte, len(get10))
	if a := testing.AllocsPerRun(100, func() {
		_, _ = ParseHead(get10, &r, nil)
		copy(cp, get10)
		r.Rebase(get10, cp)
	}); a != 0 {
		t.Fatalf("%v allocs per ParseHead+Rebase", a)
	}
}

// TestAllocsParseHeadGrown: a Request whose Headers grew beyond the inline array
// keeps the grown slice for the next parse.
func TestAllocsParseHeadGrown(t *testing.T) {
	var r Request
	buf := []byte("GET / HTTP/1.1\r\nHost: h\r\n" + fields(40) + "\r\n")
	if _, err := ParseHead(buf, &r, nil); err != nil || len(r.Headers) != 41 {
		t.Fatal(err, len(r.Headers))
	}
	if a := testing.AllocsPerRun(10, func() { _, _ = ParseHead(buf, &r, nil) }); a != 0 {
		t.Fatalf("%v allocs with a grown Headers slice", a)
	}
}

func TestAllocsChunked(t *testing.T) {
	var d ChunkedDecoder
	in := []byte("400\r\n" + string(make([]byte, 1024)) + "\r\n10;ext=1\r\n0123456789abcdef\r\n0\r\nX-Sum: 1\r\n\r\n")
	dst := make([]byte, 0, 4096)
	d.Decode(in, dst, 0) // warm the trailer buffers
	a := testing.AllocsPerRun(100, func() {
		d.Reset()
		n, out, done, err := d.Decode(in, dst[:0], 0)
		if n != len(in) || !done || err != nil || len(out) != 1040 {
			t.Fatal(n, done, err)
		}
	})
	if a != 0 {
		t.Fatalf("%v allocs per Decode", a)
	}
}

func TestAllocsWriter(t *testing.T) {
	hdr := []httpmsg.Field{{Name: "Content-Type", Value: "application/json"}, {Name: "X-Request-Id", Value: "abc"}}
	dst := make([]byte, 0, 4096)
	body := []byte(`{"message":"Hello, World!"}`)
	a := testing.AllocsPerRun(100, func() {
		b := AppendHead(dst[:0], 200, hdr, int64(len(body)), false, false)
		b = append(b, body...)
		b = AppendHead(b, 200, hdr, -1, true, false)
		b = AppendChunk(b, body)
		b = AppendLastChunk(b, hdr)
		b = AppendError(b, errBadHost, nil)
		_ = AppendStatusLine(b, 799)
	})
	if a != 0 {
		t.Fatalf("%v allocs per response", a)
	}
}
