package h1

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

var dateLine = regexp.MustCompile(`Date: [A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT\r\n`)

// normDate replaces the Date value (checked for its IMF-fixdate shape) by "D".
func normDate(t *testing.T, b []byte) string {
	t.Helper()
	if got := len(dateLine.FindAll(b, -1)); got != 1 {
		t.Fatalf("%d Date fields in %q", got, b)
	}
	return dateLine.ReplaceAllString(string(b), "Date: D\r\n")
}

func TestAppendHead(t *testing.T) {
	hdr := []httpmsg.Field{{Name: "Content-Type", Value: "text/plain"}}
	tests := []struct {
		name        string
		status      int
		header      []httpmsg.Field
		bodyLen     int64
		close, ka10 bool
		want        string
	}{
		{name: "200", status: 200, header: hdr, bodyLen: 5,
			want: "HTTP/1.1 200 OK\r\nDate: D\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n"},
		{name: "200 empty", status: 200, bodyLen: 0, want: "HTTP/1.1 200 OK\r\nDate: D\r\nContent-Length: 0\r\n\r\n"},
		{name: "404 close", status: 404, bodyLen: 9, close: true,
			want: "HTTP/1.1 404 Not Found\r\nDate: D\r\nContent-Length: 9\r\nConnection: close\r\n\r\n"},
		{name: "keep-alive 1.0", status: 200, bodyLen: 2, ka10: true,
			want: "HTTP/1.1 200 OK\r\nDate: D\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n"},
		{name: "close wins", status: 200, bodyLen: 2, close: true, ka10: true,
			want: "HTTP/1.1 200 OK\r\nDate: D\r\nContent-Length: 2\r\nConnection: close\r\n\r\n"},
		{name: "chunked", status: 200, header: hdr, bodyLen: -1,
			want: "HTTP/1.1 200 OK\r\nDate: D\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"},
		{name: "204", status: 204, bodyLen: 0, close: true, want: "HTTP/1.1 204 No Content\r\nDate: D\r\nConnection: close\r\n\r\n"},
		{name: "204 streamed", status: 204, bodyLen: -1, want: "HTTP/1.1 204 No Content\r\nDate: D\r\n\r\n"},
		{name: "304", status: 304, header: []httpmsg.Field{{Name: "ETag", Value: `"x"`}}, bodyLen: 10,
			want: "HTTP/1.1 304 Not Modified\r\nDate: D\r\nETag: \"x\"\r\n\r\n"},
		{name: "103", status: 103, header: []httpmsg.Field{{Name: "Link", Value: "</s.css>; rel=preload"}}, bodyLen: 0, close: true,
			want: "HTTP/1.1 103 Early Hints\r\nDate: D\r\nLink: </s.css>; rel=preload\r\n\r\n"},
		{name: "101", status: 101, header: []httpmsg.Field{{Name: "Connection", Value: "Upgrade"}, {Name: "Upgrade", Value: "h2c"}}, bodyLen: -1,
			want: "HTTP/1.1 101 Switching Protocols\r\nDate: D\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n"},
		{name: "unknown code", status: 299, bodyLen: 0, want: "HTTP/1.1 299 Unknown\r\nDate: D\r\nContent-Length: 0\r\n\r\n"},
		{name: "code 600", status: 600, bodyLen: 0, want: "HTTP/1.1 600 Unknown\r\nDate: D\r\nContent-Length: 0\r\n\r\n"},
		{name: "invalid code", status: 42, bodyLen: 0, want: "HTTP/1.1 500 Internal Server Error\r\nDate: D\r\nContent-Length: 0\r\n\r\n"},
		{name: "owned and unsafe fields dropped", status: 200, bodyLen: 1, header: []httpmsg.Field{
			{Name: "X-Ok", Value: "a\tb \x80"},
			{Name: "Content-Length", Value: "100"},
			{Name: "transfer-encoding", Value: "chunked"},
			{Name: "CONNECTION", Value: "keep-alive"},
			{Name: "date", Value: "yesterday"},
			{Name: "X-Split", Value: "a\r\nSet-Cookie: evil=1"},
			{Name: "X-LF", Value: "a\nb"},
			{Name: "X-CR", Value: "a\rb"},
			{Name: "X-NUL", Value: "a\x00b"},
			{Name: "X Bad", Value: "v"},
			{Name: "X:Bad", Value: "v"},
			{Name: "X-Bad\r\nInjected", Value: "v"},
			{Name: "", Value: "v"},
			{Name: "X-Empty", Value: ""},
		}, want: "HTTP/1.1 200 OK\r\nDate: D\r\nX-Ok: a\tb \x80\r\nX-Empty: \r\nContent-Length: 1\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendHead([]byte("prefix"), tt.status, tt.header, tt.bodyLen, tt.close, tt.ka10)
			if !bytes.HasPrefix(got, []byte("prefix")) {
				t.Fatal("dst clobbered")
			}
			if s := normDate(t, got[6:]); s != tt.want {
				t.Fatalf("got  %q\nwant %q", s, tt.want)
			}
		})
	}
}

// readResponse parses b with net/http as a client would after a GET.
func readResponse(t *testing.T, b []byte) (*http.Response, []byte) {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(b))
	resp, err := http.ReadResponse(br, &http.Request{Method: "GET"})
	if err != nil {
		t.Fatalf("ReadResponse(%q): %v", b, err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("body of %q: %v", b, err)
	}
	if rest, _ := io.ReadAll(br); len(rest) != 0 {
		t.Fatalf("%d bytes left after the response %q", len(rest), b)
	}
	return resp, body
}

func TestAppendHeadNetHTTP(t *testing.T) {
	hdr := []httpmsg.Field{
		{Name: "Content-Type", Value: "application/json"},
		{Name: "X-Split", Value: "a\r\nX-Injected: 1"},
		{Name: "Set-Cookie", Value: "a=1"},
		{Name: "Set-Cookie", Value: "b=2"},
	}
	body := []byte(`{"ok":true}`)
	b := append(AppendHead(nil, 201, hdr, int64(len(body)), false, false), body...)
	resp, got := readResponse(t, b)
	if resp.StatusCode != 201 || resp.Status != "201 Created" || resp.ProtoMinor != 1 || resp.Close ||
		resp.ContentLength != int64(len(body)) || string(got) != string(body) ||
		resp.Header.Get("Content-Type") != "application/json" || len(resp.Header.Values("Set-Cookie")) != 2 ||
		resp.Header.Get("X-Injected") != "" || resp.Header.Get("X-Split") != "" {
		t.Fatalf("%+v %q", resp, got)
	}
	if _, err := http.ParseTime(resp.Header.Get("Date")); err != nil {
		t.Fatal(err)
	}

	// Closing response.
	b = append(AppendHead(nil, 500, nil, 3, true, false), "err"...)
	if resp, got := readResponse(t, b); !resp.Close || string(got) != "err" {
		t.Fatalf("%+v %q", resp, got)
	}

	// 204 and 304 carry no body even when the caller gave a length.
	for _, status := range []int{204, 304} {
		if resp, got := readResponse(t, AppendHead(nil, status, nil, 10, false, false)); resp.StatusCode != status || len(got) != 0 {
			t.Fatalf("%d: %+v", status, resp)
		}
	}

	// Chunked with trailers.
	b = AppendHead(nil, 200, []httpmsg.Field{{Name: "Trailer", Value: "X-Sum"}}, -1, false, false)
	b = AppendChunk(b, []byte("hello, "))
	b = AppendChunk(b, nil)
	b = AppendChunk(b, []byte(strings.Repeat("w", 300)))
	b = AppendLastChunk(b, []httpmsg.Field{
		{Name: "X-Sum", Value: "42"},
		{Name: "Content-Length", Value: "5"},
		{Name: "X-Bad", Value: "1\r\n\r\nHTTP/1.1 200 OK"},
	})
	resp, got = readResponse(t, b)
	if string(got) != "hello, "+strings.Repeat("w", 300) || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("%+v %q", resp, got)
	}
	if resp.Trailer.Get("X-Sum") != "42" || resp.Trailer.Get("Content-Length") != "" || resp.Trailer.Get("X-Bad") != "" {
		t.Fatalf("trailers %v", resp.Trailer)
	}
}

func TestAppendChunk(t *testing.T) {
	if got := string(AppendChunk([]byte("x"), nil)); got != "x" {
		t.Fatalf("empty chunk wrote %q", got)
	}
	if got := string(AppendChunk(nil, make([]byte, 255))); got != "ff\r\n"+string(make([]byte, 255))+"\r\n" {
		t.Fatalf("got %q", got[:8])
	}
	if got := string(AppendLastChunk(nil, nil)); got != "0\r\n\r\n" {
		t.Fatalf("got %q", got)
	}
	// What AppendChunk writes, the decoder reads back.
	var d ChunkedDecoder
	b := AppendLastChunk(AppendChunk(AppendChunk(nil, []byte("ab")), []byte("cde")), []httpmsg.Field{{Name: "T", Value: "v"}})
	n, out, done, err := d.Decode(b, nil, 0)
	if n != len(b) || string(out) != "abcde" || !done || err != nil || len(d.Trailers()) != 1 {
		t.Fatalf("%d %q %v %v", n, out, done, err)
	}
}

func TestStatusLine(t *testing.T) {
	for code := 100; code < 600; code++ {
		want := http.StatusText(code)
		if want == "" {
			want = "Unknown"
		}
		if code == 413 {
			want = "Content Too Large"
		}
		line := string(AppendStatusLine(nil, code))
		if line != "HTTP/1.1 "+strconv.Itoa(code)+" "+want+"\r\n" {
			t.Fatalf("status line %q", line)
		}
	}
	if got := string(AppendStatusLine(nil, 999)); got != "HTTP/1.1 999 Unknown\r\n" {
		t.Fatal(got)
	}
	if got := string(AppendStatusLine(nil, 1000)); got != "HTTP/1.1 500 Internal Server Error\r\n" {
		t.Fatal(got)
	}
}

func TestAppendError(t *testing.T) {
	for _, e := range []*Error{errBadHost, errURITooLong, errHeaderTooLarge, errTransferCoding, errVersionSupported, errExpectation, nil} {
		b := AppendError(nil, e, nil)
		resp, body := readResponse(t, b)
		status, reason := 500, "internal server error"
		if e != nil {
			status, reason = e.Status, e.Reason
		}
		if resp.StatusCode != status || string(body) != reason || !resp.Close ||
			resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || resp.Header.Get("Date") == "" {
			t.Fatalf("%+v %q", resp, body)
		}
	}
}

// TestAppendErrorFields: extra fields are written, except the ones the writer owns
// and the ones that would split the response.
func TestAppendErrorFields(t *testing.T) {
	fields := []httpmsg.Field{
		{Name: "X-Request-ID", Value: "abc-1"},
		{Name: "Content-Length", Value: "99"},
		{Name: "Connection", Value: "keep-alive"},
		{Name: "X-Evil", Value: "a\r\nSet-Cookie: x=1"},
		{Name: "Bad Name", Value: "v"},
	}
	resp, body := readResponse(t, AppendError(nil, errBodyTooLarge, fields))
	if resp.StatusCode != 413 || string(body) != errBodyTooLarge.Reason || !resp.Close ||
		resp.Header.Get("X-Request-ID") != "abc-1" || resp.Header.Get("Set-Cookie") != "" ||
		resp.Header.Get("X-Evil") != "" || len(resp.Header.Values("Content-Length")) != 1 {
		t.Fatalf("%+v %q", resp, body)
	}
}

func TestContinue100(t *testing.T) {
	br := bufio.NewReader(bytes.NewReader(Continue100))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 100 {
		t.Fatal(resp, err)
	}
	if string(Continue100) != "HTTP/1.1 100 Continue\r\n\r\n" {
		t.Fatal("Continue100 changed")
	}
}

var dateLineRE = regexp.MustCompile("Date: [^\r]*\r\n")

// TestValidCache runs responses through one ValidCache: fields repeated from
// the previous response pass by comparison, and every field that differs,
// however close to a cached one, is checked again.
func TestValidCache(t *testing.T) {
	var vc ValidCache
	long := strings.Repeat("v", validLen+5)
	steps := []struct {
		fields []httpmsg.Field
		want   string // the caller's fields as written
	}{
		{[]httpmsg.Field{{Name: "A", Value: "1"}, {Name: "B", Value: long}}, "A: 1\r\nB: " + long + "\r\n"},
		{[]httpmsg.Field{{Name: "A", Value: "1"}, {Name: "B", Value: long}}, "A: 1\r\nB: " + long + "\r\n"},
		{[]httpmsg.Field{{Name: "A", Value: "\r"}, {Name: "B", Value: long[:len(long)-1] + "\n"}}, ""},
		{[]httpmsg.Field{{Name: "A", Value: "1"}, {Name: "B C", Value: "x"}}, "A: 1\r\n"},
		{[]httpmsg.Field{{Name: "", Value: ""}, {Name: "B", Value: "x"}}, "B: x\r\n"},
		{[]httpmsg.Field{{Name: "", Value: ""}, {Name: "B", Value: "x"}}, "B: x\r\n"},
		{[]httpmsg.Field{{Name: "A", Value: ""}, {Name: "B", Value: "x\x00"}}, "A: \r\n"},
	}
	for i, st := range steps {
		got := dateLineRE.ReplaceAllString(string(AppendHeadCached(nil, 200, st.fields, 0, false, false, &vc)), "")
		want := "HTTP/1.1 200 OK\r\n" + st.want + "Content-Length: 0\r\n\r\n"
		if got != want {
			t.Fatalf("step %d:\n got %q\nwant %q", i, got, want)
		}
	}
	// Past validSlots fields, every field is checked each time.
	var many []httpmsg.Field
	for i := 0; i < validSlots+2; i++ {
		many = append(many, httpmsg.Field{Name: "X", Value: "y"})
	}
	many[validSlots+1].Value = "bad\r\nInjected: 1"
	out := string(AppendHeadCached(nil, 200, many, 0, false, false, &vc))
	if strings.Contains(out, "Injected") || strings.Count(out, "X: y\r\n") != validSlots+1 {
		t.Fatalf("%q", out)
	}
}

// TestValidCacheSameAsUncached: over random sequences of responses whose fields
// repeat, change every time (volatile slots), change name, or carry values that
// must be dropped, the cached writer writes exactly what the uncached one writes.
func TestValidCacheSameAsUncached(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"X-Request-ID", "Content-Type", "Vary", "Bad Name", "ETag",
		strings.Repeat("N", validLen), strings.Repeat("L", validLen+1)} // the longest name a slot keeps, and one longer
	values := func(n int) string {
		switch rng.IntN(6) {
		case 0:
			return "id-" + strconv.Itoa(n) // changes with every response
		case 1:
			return "text/plain; charset=utf-8"
		case 2:
			return "v\r\nInjected: " + strconv.Itoa(n)
		case 3:
			return strings.Repeat("l", validLen-1+rng.IntN(3)) // up to the longest a slot holds, and longer
		case 4:
			return "nul\x00" + strconv.Itoa(n%3)
		}
		return "x" + strconv.Itoa(n%2)
	}
	var vc ValidCache
	shape := []string{"X-Request-ID", "Content-Type"}
	for n := range 5000 {
		if rng.IntN(50) == 0 { // another route: another set of fields
			shape = shape[:0]
			for range 1 + rng.IntN(validSlots+2) {
				shape = append(shape, names[rng.IntN(len(names))])
			}
		}
		fields := make([]httpmsg.Field, len(shape))
		for i, name := range shape {
			v := "id-" + strconv.Itoa(n) // the common case: a request id, then stable fields
			if i > 0 || rng.IntN(10) == 0 {
				v = values(n)
			}
			fields[i] = httpmsg.Field{Name: name, Value: v}
		}
		// Date is refreshed by a ticker: it may change between the two calls.
		got := dateLineRE.ReplaceAllString(string(AppendHeadCached(nil, 200, fields, 0, false, false, &vc)), "")
		if want := dateLineRE.ReplaceAllString(string(AppendHead(nil, 200, fields, 0, false, false)), ""); got != want {
			t.Fatalf("response %d %q:\n got %q\nwant %q", n, fields, got, want)
		}
	}
}

// TestStatus413ReasonPhrase: RFC 9110 §15.5.14 renamed 413 "Content Too Large".
func TestStatus413ReasonPhrase(t *testing.T) {
	if got := string(AppendStatusLine(nil, 413)); got != "HTTP/1.1 413 Content Too Large\r\n" {
		t.Fatalf("status line %q", got)
	}
}
