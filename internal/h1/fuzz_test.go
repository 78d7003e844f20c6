package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"reflect"
	"testing"

	"github.com/celeris-dev/celeris/httpfield"
)

// inside reports whether s is a view of buf (or nil), using the offset rule Rebase
// relies on: cap(buf)-cap(s).
func inside(s, buf []byte) bool {
	if s == nil {
		return true
	}
	off := cap(buf) - cap(s)
	if off < 0 || off+len(s) > len(buf) {
		return false
	}
	if len(s) == 0 {
		return true
	}
	return &buf[off] == &s[0]
}

var fuzzLimits = []*Limits{nil, small, {MaxURILength: 100, MaxHeaderBytes: 300, MaxHeaderCount: 8, MaxBodySize: 1000}}

func FuzzParseHead(f *testing.F) {
	for _, tt := range parseTests {
		if len(tt.in) < 4096 {
			f.Add([]byte(tt.in), uint8(0))
		}
	}
	f.Add([]byte("GET / HTTP/1.1\r\nHost: h\r\nPragma: no-cache\r\nA: 1\r\nA: 2\r\n\r\n"), uint8(1))
	f.Fuzz(func(t *testing.T, buf []byte, which uint8) {
		lim := fuzzLimits[int(which)%len(fuzzLimits)]
		orig := append([]byte(nil), buf...)
		var r Request
		n, err := ParseHead(buf, &r, lim)
		if !bytes.Equal(buf, orig) {
			t.Fatal("ParseHead modified its input")
		}
		if err != nil {
			var e *Error
			if err != ErrNeedMore && !errors.As(err, &e) {
				t.Fatalf("error %v is neither ErrNeedMore nor *Error", err)
			}
			if n != 0 {
				t.Fatalf("n = %d with error %v", n, err)
			}
			switch statusOf(err) {
			case -1, 400, 413, 414, 417, 431, 501, 505:
			default:
				t.Fatalf("status %d", statusOf(err))
			}
			return
		}
		if n <= 0 || n > len(buf) || n != r.HeadLen {
			t.Fatalf("n = %d, HeadLen %d, len %d", n, r.HeadLen, len(buf))
		}
		slices := [][]byte{r.Method, r.URI, r.Path, r.Query, r.Host, r.HTTP2Settings}
		for _, h := range r.Headers {
			slices = append(slices, h.Name, h.Value)
		}
		for i, s := range slices {
			if !inside(s, buf[:n]) {
				t.Fatalf("slice %d %q is not inside the head", i, s)
			}
		}
		if len(r.Method) == 0 || len(r.URI) == 0 || r.Major != 1 || r.Minor > 1 {
			t.Fatalf("implausible %+v", viewOf(&r))
		}
		// RFC 9112 §3.2: an accepted Host (or absolute-form authority) is a valid
		// uri-host [":" port]; RFC 9112 §3: methods are bounded.
		if r.Host != nil && !httpfield.ValidAuthority(r.Host) || len(r.Method) > MaxMethodLength {
			t.Fatalf("accepted Host %q, method %q", r.Host, r.Method)
		}
		want := viewOf(&r)

		// The head alone parses the same; a prefix of it needs more.
		var r2 Request
		if n2, err := ParseHead(buf[:n], &r2, lim); n2 != n || err != nil || !reflect.DeepEqual(viewOf(&r2), want) {
			t.Fatalf("head alone: %d %v", n2, err)
		}
		for _, k := range []int{n - 1, n / 2} {
			if _, err := ParseHead(buf[:k], &r2, lim); err != ErrNeedMore {
				t.Fatalf("prefix %d of a valid head: %v", k, err)
			}
		}

		// Rebase onto a copy.
		cp := append([]byte(nil), buf[:n]...)
		r.Rebase(buf, cp)
		if got := viewOf(&r); !reflect.DeepEqual(got, want) {
			t.Fatalf("Rebase: %+v != %+v", got, want)
		}

		// Differential check against net/http when it accepts the head too.
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(buf[:n])))
		if err != nil {
			return
		}
		if req.Method != want.Method || req.RequestURI != want.URI {
			t.Fatalf("net/http: %q %q, we: %q %q", req.Method, req.RequestURI, want.Method, want.URI)
		}
		// net/http moves Host and Transfer-Encoding out of Header, merges
		// Content-Length and adds Cache-Control for Pragma: compare the rest.
		skip := func(name string) bool {
			switch http.CanonicalHeaderKey(name) {
			case "Host", "Transfer-Encoding", "Content-Length", "Cache-Control":
				return true
			}
			return false
		}
		ours := 0
		for _, h := range r.Headers {
			if !skip(string(h.Name)) {
				ours++
			}
		}
		theirs := 0
		for k, v := range req.Header {
			if !skip(k) {
				theirs += len(v)
			}
		}
		if ours != theirs {
			t.Fatalf("header count: net/http %d, we %d", theirs, ours)
		}
		if !r.Chunked && r.ContentLength >= 0 && req.ContentLength != r.ContentLength {
			t.Fatalf("Content-Length: net/http %d, we %d", req.ContentLength, r.ContentLength)
		}
	})
}

func FuzzChunked(f *testing.F) {
	for _, tt := range chunkedTests {
		if len(tt.in) < 4096 {
			f.Add([]byte(tt.in), uint16(tt.maxBody), []byte{1, 2, 3})
		}
	}
	f.Fuzz(func(t *testing.T, in []byte, maxBody uint16, splits []byte) {
		max := int64(maxBody)
		if max == 0 {
			max = DefaultMaxBodySize
		}
		var d ChunkedDecoder
		n, out, done, err := d.Decode(in, nil, int64(maxBody))
		if n < 0 || n > len(in) || int64(len(out)) > max {
			t.Fatalf("consumed %d of %d, out %d > max %d", n, len(in), len(out), max)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || (e.Status != 400 && e.Status != 413 && e.Status != 431) {
				t.Fatalf("error %v", err)
			}
		}
		whole := chunkedResult{Data: string(out), Trailers: trailerStrings(d.Trailers()), Consumed: n, Done: done, Status: statusOf(err)}
		if err == nil {
			whole.Status = 0
		}
		// Piece sizes from splits, at least len(in)/64 so that a long input is
		// not fed byte by byte (quadratic, and it stalls the fuzzer).
		sizes := make([]int, 0, len(splits))
		for _, s := range splits {
			sizes = append(sizes, int(s)+1+len(in)/64)
		}
		got := decodeSplit(in, int64(maxBody), sizes)
		if whole.Status != 0 {
			got.Consumed, whole.Consumed = 0, 0
		}
		if !reflect.DeepEqual(got, whole) {
			t.Fatalf("split %v:\ngot   %+v\nwhole %+v", sizes, got, whole)
		}
		if !done || err != nil {
			return
		}
		// What we accept, net/http's chunked reader decodes the same way.
		theirs, terr := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(in[:n])))
		if terr == nil && !bytes.Equal(theirs, out) {
			t.Fatalf("net/http decoded %q, we %q", theirs, out)
		}
	})
}
