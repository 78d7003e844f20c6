package celerisgrpc

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
)

func gz(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.Bytes()
}

func prefixed(flag byte, msg []byte) []byte {
	b := []byte{flag, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}

// The message reader splits a body into messages and reports a bad prefix, a
// message over the limit, a compressed one and a truncated body as statuses.
func TestMsgReader(t *testing.T) {
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	tests := []struct {
		name string
		body []byte
		max  int
		gzip bool
		want []string
		code codes.Code // of the error after want; OK: io.EOF
	}{
		{name: "empty body", body: nil, max: 10},
		{name: "one", body: prefixed(0, []byte("abc")), max: 10, want: []string{"abc"}},
		{name: "empty message", body: prefixed(0, nil), max: 10, want: []string{""}},
		{name: "two", body: cat(prefixed(0, []byte("ab")), prefixed(0, []byte("cde"))), max: 10, want: []string{"ab", "cde"}},
		{name: "at max", body: prefixed(0, []byte("0123456789")), max: 10, want: []string{"0123456789"}},
		{name: "over max", body: prefixed(0, []byte("0123456789X")), max: 10, code: codes.ResourceExhausted},
		{name: "huge length", body: []byte{0, 0xff, 0xff, 0xff, 0xff}, max: 4 << 20, code: codes.ResourceExhausted},
		{name: "compressed without encoding", body: prefixed(1, []byte("x")), max: 10, code: codes.Internal},
		{name: "compressed, not gzip", body: prefixed(1, []byte("x")), max: 10, gzip: true, code: codes.Internal},
		// The limit applies to the wire length too, as grpc-go's does.
		{name: "gzip", body: prefixed(1, gz("hello")), max: 64, gzip: true, want: []string{"hello"}},
		{name: "gzip then plain", body: cat(prefixed(1, gz("a")), prefixed(0, []byte("b"))), max: 64, gzip: true, want: []string{"a", "b"}},
		{name: "gzip at max", body: prefixed(1, gz(strings.Repeat("a", 64))), max: 64, gzip: true, want: []string{strings.Repeat("a", 64)}},
		{name: "gzip over max", body: prefixed(1, gz(strings.Repeat("a", 65))), max: 64, gzip: true, code: codes.ResourceExhausted},
		{name: "gzip bomb", body: prefixed(1, gz(strings.Repeat("\x00", 1<<20))), max: 1 << 16, gzip: true, code: codes.ResourceExhausted},
		{name: "bad flag", body: prefixed(2, []byte("x")), max: 10, code: codes.Internal},
		{name: "short prefix", body: []byte{0, 0, 0}, max: 10, code: codes.Internal},
		{name: "short message", body: prefixed(0, []byte("abc"))[:7], max: 10, code: codes.Internal},
		{name: "good then short", body: cat(prefixed(0, []byte("a")), []byte{0, 0}), max: 10, want: []string{"a"}, code: codes.Internal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mr := msgReader{r: bytes.NewReader(tt.body), max: tt.max}
			if tt.gzip {
				mr.comp = encoding.GetCompressor("gzip")
			}
			for _, w := range tt.want {
				got, err := mr.next()
				if err != nil || string(got) != w {
					t.Fatalf("next = %q, %v; want %q", got, err, w)
				}
			}
			_, err := mr.next()
			if tt.code == codes.OK {
				if err != io.EOF {
					t.Fatalf("end: %v, want io.EOF", err)
				}
				return
			}
			if st, ok := status.FromError(err); !ok || st.Code() != tt.code {
				t.Fatalf("end: %v, want code %v", err, tt.code)
			}
		})
	}
}

// A body's own error passes through.
func TestMsgReaderBodyError(t *testing.T) {
	boom := errors.New("boom")
	mr := msgReader{r: io.MultiReader(bytes.NewReader([]byte{0, 0}), errReader{boom}), max: 10}
	if _, err := mr.next(); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// FuzzMsgReader: any body yields messages that re-encode to a prefix of it,
// never a panic, and never a message over the limit.
func FuzzMsgReader(f *testing.F) {
	f.Add(prefixed(0, []byte("hello")), 16)
	f.Add(append(prefixed(0, nil), prefixed(0, []byte("x"))...), 1)
	f.Add([]byte{1, 0, 0, 0, 1, 'x'}, 4)
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xff}, 1<<20)
	f.Fuzz(func(t *testing.T, body []byte, max int) {
		if max < 0 {
			max = -max
		}
		max %= 1 << 20
		mr := msgReader{r: bytes.NewReader(body), max: max}
		var re []byte
		for {
			m, err := mr.next()
			if err != nil {
				if err != io.EOF {
					if _, ok := status.FromError(err); !ok {
						t.Fatalf("non-status error %v", err)
					}
				} else if !bytes.Equal(re, body) {
					t.Fatalf("clean end but messages %x do not re-encode body %x", re, body)
				}
				break
			}
			if len(m) > max {
				t.Fatalf("message of %d bytes over max %d", len(m), max)
			}
			re = append(re, prefixed(0, m)...)
			if !bytes.HasPrefix(body, re) {
				t.Fatalf("messages %x are not a prefix of %x", re, body)
			}
		}
	})
}

func TestDecodeTimeout(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1S", time.Second, true},
		{"100m", 100 * time.Millisecond, true},
		{"5u", 5 * time.Microsecond, true},
		{"7n", 7, true},
		{"2M", 2 * time.Minute, true},
		{"3H", 3 * time.Hour, true},
		{"99999999H", 1<<63 - 1, true},
		{"0m", 0, true},
		{"", 0, false},
		{"S", 0, false},
		{"1", 0, false},
		{"1x", 0, false},
		{"-1S", 0, false},
		{"123456789S", 0, false}, // more than 8 digits
		{"1 S", 0, false},
	}
	for _, tt := range tests {
		got, err := decodeTimeout(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("decodeTimeout(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// grpc-message is percent-encoded as the spec says (grpc-go's test vectors).
func TestEncodeGRPCMessage(t *testing.T) {
	for in, want := range map[string]string{
		"":       "",
		"Hello":  "Hello",
		"\u0000": "%00",
		"%":      "%25",
		"\t\ttest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n": "%09%09test with whitespace%0D%0Aand Unicode BMP %E2%98%BA and non-BMP %F0%9F%98%88%09%0A",
		"~ tilde": "~ tilde",
	} {
		if got := encodeGRPCMessage(in); got != want {
			t.Errorf("encodeGRPCMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidContentType(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/grpc":               true,
		"application/grpc+proto":         true,
		"application/grpc;charset=utf-8": true,
		"application/grpc+proto;a=b":     true,
		"Application/GRPC":               true,
		"application/grpc+json":          false,
		"application/grpcx":              false,
		"application/json":               false,
		"application/grpc-web":           false,
		"":                               false,
		"application/grp":                false,
	} {
		if got := validContentType(ct); got != want {
			t.Errorf("validContentType(%q) = %v, want %v", ct, got, want)
		}
	}
}

func TestMetadataValues(t *testing.T) {
	for _, tt := range []struct{ k, wire, want string }{
		{"x-plain", "a,b", "a,b"},
		{"x-bin", "AAEC", "\x00\x01\x02"},       // padded length
		{"x-bin", "AAECAw", "\x00\x01\x02\x03"}, // unpadded
		{"x-bin", "AAECAw==", "\x00\x01\x02\x03"},
	} {
		got, err := decodeMetadataValue(tt.k, tt.wire)
		if err != nil || got != tt.want {
			t.Errorf("decodeMetadataValue(%q, %q) = %q, %v; want %q", tt.k, tt.wire, got, err, tt.want)
		}
	}
	if _, err := decodeMetadataValue("x-bin", "!!!"); err == nil {
		t.Error("bad base64 decoded without error")
	}
	if got := encodeMetadataValue("x-bin", "\x00\x01\x02\x03"); got != "AAECAw" {
		t.Errorf("encodeMetadataValue = %q", got)
	}
}
