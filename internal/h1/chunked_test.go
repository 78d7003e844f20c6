package h1

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

type chunkedTest struct {
	name     string
	in       string
	maxBody  int64 // 0: DefaultMaxBodySize
	want     string
	trailers []string // "Name: Value"
	consumed int      // -1: len(in)
	done     bool
	status   int // refusal status; 0 when none
}

var chunkedTests = []chunkedTest{
	{name: "one chunk", in: "5\r\nhello\r\n0\r\n\r\n", want: "hello", consumed: -1, done: true},
	{name: "empty body", in: "0\r\n\r\n", consumed: -1, done: true},
	{name: "zeros", in: "000\r\n\r\n", consumed: -1, done: true},
	{name: "hex digits", in: "a\r\n0123456789\r\nA\r\nabcdefghij\r\n0\r\n\r\n", want: "0123456789abcdefghij", consumed: -1, done: true},
	{name: "leading zeros", in: "0005\r\nhello\r\n1\r\n!\r\n0\r\n\r\n", want: "hello!", consumed: -1, done: true},
	{name: "binary data", in: "4\r\n\r\n\x00\xff\r\n0\r\n\r\n", want: "\r\n\x00\xff", consumed: -1, done: true},
	{name: "extensions", in: "5;foo=bar;baz\r\nhello\r\n0;last=\"yes\"\r\n\r\n", want: "hello", consumed: -1, done: true},
	{name: "quoted extension", in: "5;a=\"b;c \\\" d\\\\\t\x80\"\r\nhello\r\n0\r\n\r\n", want: "hello", consumed: -1, done: true},
	{name: "BWS in extensions", in: "5 ;a = b\t;\tc\r\nhello\r\n0\r\n\r\n", want: "hello", consumed: -1, done: true},
	{name: "trailers", in: "5\r\nhello\r\n0\r\nX-T: v\r\nY:  w w \t\r\nEmpty:\r\n\r\n", want: "hello",
		trailers: []string{"X-T: v", "Y: w w", "Empty: "}, consumed: -1, done: true},
	{name: "next request follows", in: "1\r\na\r\n0\r\n\r\nGET / HTTP/1.1\r\n", want: "a", consumed: 11, done: true},
	{name: "incomplete data", in: "5\r\nhel", want: "hel", consumed: -1},
	{name: "incomplete size line", in: "5\r", consumed: 0},
	{name: "incomplete extension", in: "5\r\nhello\r\n3;ext=", want: "hello", consumed: 10},
	{name: "incomplete after data", in: "5\r\nhello\r", want: "hello", consumed: -1},
	{name: "incomplete trailer", in: "0\r\nX: y", consumed: 3},
	{name: "incomplete final CRLF", in: "0\r\nX: y\r\n\r", consumed: 9},
	{name: "16 digits", in: "7fffffffffffffff\r\nab", maxBody: math.MaxInt64, want: "ab", consumed: -1},
	{name: "body at limit", in: "3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n", maxBody: 6, want: "abcdef", consumed: -1, done: true},

	// RFC 9112 §7.1: the message ends only after the trailer section's final CRLF.
	{name: "last chunk without final CRLF", in: "5\r\nhello\r\n0\r\n", want: "hello", consumed: -1},
	{name: "trailer without final CRLF", in: "5\r\nhello\r\n0\r\nX: y\r\n", want: "hello", consumed: -1},
	{name: "one byte chunks", in: strings.Repeat("1\r\nx\r\n", 3000) + "0\r\n\r\n", want: strings.Repeat("x", 3000), consumed: -1, done: true},
	// Extensions on every chunk of a long stream (AWS SigV4 chunk signatures) stay
	// within the overhead allowance, which grows with the data.
	{name: "signed chunks", in: strings.Repeat("40;chunk-signature="+strings.Repeat("f", 64)+"\r\n"+strings.Repeat("d", 64)+"\r\n", 400) + "0\r\n\r\n",
		want: strings.Repeat("d", 64*400), consumed: -1, done: true},

	{name: "size overflow", in: "8000000000000000\r\n", maxBody: math.MaxInt64, status: 400},
	{name: "17 digits", in: "00000000000000001\r\na\r\n0\r\n\r\n", status: 400},
	{name: "no digits", in: "\r\n", status: 400},
	{name: "extension without size", in: ";a\r\n", status: 400},
	{name: "not hex", in: "x\r\n", status: 400},
	{name: "negative", in: "-1\r\n", status: 400},
	{name: "plus", in: "+1\r\na\r\n", status: 400},
	{name: "0x prefix", in: "0x5\r\nhello\r\n", status: 400},
	{name: "leading space", in: " 5\r\nhello\r\n", status: 400},
	{name: "trailing space", in: "5 \r\nhello\r\n", status: 400},
	{name: "bare LF after size", in: "5\nhello\r\n0\r\n\r\n", status: 400},
	{name: "bare CR in size line", in: "5\rx\r\nhello\r\n", status: 400},
	{name: "empty extension name", in: "5;\r\nhello\r\n", status: 400},
	{name: "empty extension value", in: "5;a=\r\nhello\r\n", status: 400},
	{name: "unterminated quote", in: "5;a=\"x\r\nhello\r\n", status: 400},
	{name: "space in extension name", in: "5;a b\r\nhello\r\n", status: 400},
	{name: "CTL in quoted extension", in: "5;a=\"\x01\"\r\nhello\r\n", status: 400},
	{name: "bare CR in extension", in: "5;a=b\rc\r\nhello\r\n", status: 400},
	{name: "size line too long", in: "5;a=" + strings.Repeat("b", 5000) + "\r\nhello\r\n", status: 400},
	{name: "size line too long incomplete", in: "5;a=" + strings.Repeat("b", 5000), status: 400},
	{name: "data longer than size", in: "5\r\nhelloX\r\n0\r\n\r\n", want: "hello", status: 400},
	{name: "LF only after data", in: "5\r\nhello\n0\r\n\r\n", want: "hello", status: 400},
	{name: "CR without LF after data", in: "5\r\nhello\rX", want: "hello", status: 400},
	// "Funky chunks" (2025 chunk-line smuggling): every line end is CRLF, and
	// anything the grammar does not allow is refused rather than skipped.
	{name: "bare LF in extension", in: "5;a\nhello\r\n0\r\n\r\n", status: 400},
	{name: "bare LF after extension value", in: "5;a=b\n\r\nhello\r\n", status: 400},
	{name: "bare LF in quoted extension", in: "5;a=\"x\ny\"\r\nhello\r\n", status: 400},
	{name: "bare CR after extension name", in: "5;a\r;b\r\nhello\r\n", status: 400},
	{name: "LF CR after size", in: "5\n\rhello\r\n", status: 400},
	{name: "bare LF last chunk", in: "5\r\nhello\r\n0\n\r\n", want: "hello", status: 400},
	{name: "bare LF last chunk, smuggled request", in: "0\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n", status: 400},
	{name: "empty extension after another", in: "5;a;\r\nhello\r\n", status: 400},
	{name: "BWS then empty extension", in: "5 ;\r\nhello\r\n", status: 400},
	{name: "extension value without name", in: "5;=b\r\nhello\r\n", status: 400},
	{name: "extension invalid byte", in: "5;a@b\r\nhello\r\n", status: 400},
	{name: "extension value with space", in: "5;a=b c\r\nhello\r\n", status: 400},
	{name: "extension non-ASCII", in: "5;a=\xff\r\nhello\r\n", status: 400},
	{name: "extension NUL", in: "5;a\x00\r\nhello\r\n", status: 400},
	{name: "space inside size", in: "1 0\r\n" + strings.Repeat("a", 16) + "\r\n", status: 400},
	{name: "tab before size", in: "\t5\r\nhello\r\n", status: 400},
	{name: "tab after size", in: "5\t\r\nhello\r\n", status: 400},
	{name: "0X prefix", in: "0X5\r\nhello\r\n", status: 400},
	{name: "minus zero", in: "-0\r\n\r\n", status: 400},
	{name: "underscore in size", in: "1_0\r\n", status: 400},
	{name: "20 digits", in: "00000000000000000005\r\nhello\r\n0\r\n\r\n", status: 400},
	{name: "data longer than size, smuggled request", in: "5\r\nhelloGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n0\r\n\r\n", want: "hello", status: 400},
	{name: "data shorter than size", in: "5\r\nhell\r\n0\r\n\r\n", want: "hell\r", status: 400},
	{name: "LF CR after data", in: "5\r\nhello\n\r0\r\n\r\n", want: "hello", status: 400},
	// CVE-2023-39326: 88 bytes of framing beyond the allowance per chunk; the
	// 187th chunk passes 16 KiB and is refused before its data.
	{name: "extension flood", in: strings.Repeat("1;"+strings.Repeat("a", 100)+"\r\nx\r\n", 700) + "0\r\n\r\n",
		want: strings.Repeat("x", 186), status: 400},
	{name: "body too large", in: "5\r\nhello\r\n0\r\n\r\n", maxBody: 4, status: 413},
	{name: "body too large over chunks", in: "3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n", maxBody: 5, want: "abc", status: 413},
	{name: "trailer obs-fold", in: "0\r\nX: a\r\n b\r\n\r\n", status: 400},
	{name: "trailer space before colon", in: "0\r\nX : a\r\n\r\n", status: 400},
	{name: "trailer empty name", in: "0\r\n: a\r\n\r\n", status: 400},
	{name: "trailer no colon", in: "0\r\nX\r\n\r\n", status: 400},
	{name: "trailer NUL", in: "0\r\nX: a\x00\r\n\r\n", status: 400},
	{name: "trailer bare CR", in: "0\r\nX: a\rb\r\n\r\n", status: 400},
	{name: "trailer bare LF", in: "0\r\nX: a\n\r\n", status: 400},
	{name: "final bare LF", in: "0\r\n\n", status: 400},
	{name: "trailers too large", in: "0\r\n" + strings.Repeat("X: 0123456789\r\n", 600) + "\r\n", status: 431},
	{name: "trailer line too large incomplete", in: "0\r\nX: " + strings.Repeat("a", 9000), status: 431},
}

func trailerStrings(fs []Field) []string {
	var s []string
	for _, f := range fs {
		s = append(s, string(f.Name)+": "+string(f.Value))
	}
	return s
}

type chunkedResult struct {
	Data     string
	Trailers []string
	Consumed int
	Done     bool
	Status   int
}

// decodeSplit feeds in to a fresh decoder in pieces of the given sizes (cycled),
// presenting unconsumed bytes again as a connection does.
func decodeSplit(in []byte, maxBody int64, sizes []int) chunkedResult {
	var d ChunkedDecoder
	var out, pending []byte
	total := 0
	for k, fed := 0, 0; ; k++ {
		size := len(in) - fed
		if len(sizes) > 0 {
			size = min(size, sizes[k%len(sizes)])
		}
		pending = append(pending, in[fed:fed+size]...)
		fed += size
		n, o, done, err := d.Decode(pending, out, maxBody)
		out = o
		total += n
		pending = pending[n:]
		if err != nil || done || fed == len(in) {
			res := chunkedResult{Data: string(out), Trailers: trailerStrings(d.Trailers()), Consumed: total, Done: done}
			if err != nil {
				res.Status = statusOf(err)
			}
			return res
		}
	}
}

func TestChunkedDecoder(t *testing.T) {
	for _, tt := range chunkedTests {
		t.Run(tt.name, func(t *testing.T) {
			want := chunkedResult{Data: tt.want, Trailers: tt.trailers, Consumed: tt.consumed, Done: tt.done, Status: tt.status}
			if want.Consumed < 0 {
				want.Consumed = len(tt.in)
			}
			in := []byte(tt.in)
			for _, sizes := range [][]int{nil, {1}, {2}, {3, 1, 7}, {4096}} {
				got := decodeSplit(in, tt.maxBody, sizes)
				if tt.status != 0 {
					// The bytes consumed before a refusal do not matter.
					got.Consumed, want.Consumed = 0, 0
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("split %v:\ngot  %+v\nwant %+v", sizes, got, want)
				}
			}
		})
	}
}

func TestChunkedDecoderReuse(t *testing.T) {
	var d ChunkedDecoder
	in := []byte("3\r\nabc\r\n0\r\nA: b\r\n\r\n")
	for i := 0; i < 3; i++ {
		d.Reset()
		n, out, done, err := d.Decode(in, nil, 0)
		if err != nil || !done || n != len(in) || string(out) != "abc" {
			t.Fatalf("round %d: %d %q %v %v", i, n, out, done, err)
		}
		if got := trailerStrings(d.Trailers()); !reflect.DeepEqual(got, []string{"A: b"}) {
			t.Fatalf("trailers %q", got)
		}
		// Once done, nothing more is consumed.
		if n, _, done, err := d.Decode([]byte("5\r\nhello"), nil, 0); n != 0 || !done || err != nil {
			t.Fatalf("after done: %d %v %v", n, done, err)
		}
	}
	d.Reset()
	if len(d.Trailers()) != 0 {
		t.Fatal("Reset kept trailers")
	}
	// A body with no trailers after one with trailers.
	n, _, done, err := d.Decode([]byte("0\r\n\r\n"), nil, 0)
	if n != 5 || !done || err != nil || len(d.Trailers()) != 0 {
		t.Fatalf("%d %v %v %v", n, done, err, d.Trailers())
	}
}

// TestChunkedTrailersCopied checks that trailers do not alias the input.
func TestChunkedTrailersCopied(t *testing.T) {
	var d ChunkedDecoder
	in := []byte("0\r\nName: value\r\n\r\n")
	if _, _, done, err := d.Decode(in, nil, 0); !done || err != nil {
		t.Fatal(done, err)
	}
	for i := range in {
		in[i] = 'x'
	}
	if got := trailerStrings(d.Trailers()); !reflect.DeepEqual(got, []string{"Name: value"}) {
		t.Fatalf("trailers %q", got)
	}
}
