package ws

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"
)

func TestParseHeader(t *testing.T) {
	mask := []byte{1, 2, 3, 4}
	m := func(b ...byte) []byte { return append(b, mask...) }
	for _, tc := range []struct {
		name       string
		in         []byte
		fromClient bool
		rsv1OK     bool
		want       Header
		n          int
		err        error
	}{
		{name: "masked text 5", in: m(0x81, 0x85), fromClient: true, want: Header{Fin: true, Op: OpText, Masked: true, Mask: [4]byte{1, 2, 3, 4}, Length: 5}, n: 6},
		{name: "server binary 0", in: []byte{0x82, 0x00}, want: Header{Fin: true, Op: OpBinary}, n: 2},
		{name: "16-bit length", in: m(0x02, 0xFE, 0x01, 0x00), fromClient: true, want: Header{Op: OpBinary, Masked: true, Mask: [4]byte{1, 2, 3, 4}, Length: 256}, n: 8},
		{name: "64-bit length", in: m(0x82, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0), fromClient: true, want: Header{Fin: true, Op: OpBinary, Masked: true, Mask: [4]byte{1, 2, 3, 4}, Length: 65536}, n: 14},
		{name: "ping 125", in: m(0x89, 0xFD), fromClient: true, want: Header{Fin: true, Op: OpPing, Masked: true, Mask: [4]byte{1, 2, 3, 4}, Length: 125}, n: 6},
		{name: "rsv1 with deflate", in: m(0xC1, 0x81), fromClient: true, rsv1OK: true, want: Header{Fin: true, RSV1: true, Op: OpText, Masked: true, Mask: [4]byte{1, 2, 3, 4}, Length: 1}, n: 6},

		{name: "empty", in: nil, err: ErrNeedMore},
		{name: "one byte", in: []byte{0x81}, fromClient: true, err: ErrNeedMore},
		{name: "mask key cut", in: []byte{0x81, 0x85, 1, 2}, fromClient: true, err: ErrNeedMore},
		{name: "16-bit length cut", in: []byte{0x82, 0xFE, 0x01}, fromClient: true, err: ErrNeedMore},
		{name: "64-bit length cut", in: []byte{0x82, 0xFF, 0, 0, 0}, fromClient: true, err: ErrNeedMore},
		{name: "unmasked client frame", in: []byte{0x81, 0x05}, fromClient: true, err: ErrUnmasked},
		{name: "masked server frame", in: m(0x81, 0x85), err: ErrMasked},
		{name: "rsv1 without extension", in: m(0xC1, 0x81), fromClient: true, err: ErrReservedBits},
		{name: "rsv2", in: m(0xA1, 0x81), fromClient: true, err: ErrReservedBits},
		{name: "rsv3", in: m(0x91, 0x81), fromClient: true, err: ErrReservedBits},
		{name: "rsv1 on a control frame", in: m(0xC9, 0x80), fromClient: true, rsv1OK: true, err: ErrReservedBits},
		{name: "opcode 3", in: m(0x83, 0x80), fromClient: true, err: ErrReservedOpcode},
		{name: "opcode 7", in: m(0x87, 0x80), fromClient: true, err: ErrReservedOpcode},
		{name: "opcode 0xB", in: m(0x8B, 0x80), fromClient: true, err: ErrReservedOpcode},
		{name: "opcode 0xF", in: m(0x8F, 0x80), fromClient: true, err: ErrReservedOpcode},
		{name: "fragmented ping", in: m(0x09, 0x80), fromClient: true, err: ErrControlFragment},
		{name: "close 126", in: m(0x88, 0xFE, 0, 126), fromClient: true, err: ErrControlTooLong},
		{name: "16-bit form for 125", in: m(0x82, 0xFE, 0, 125), fromClient: true, err: ErrLengthEncoding},
		{name: "64-bit form for 65535", in: m(0x82, 0xFF, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF), fromClient: true, err: ErrLengthEncoding},
		{name: "64-bit most significant bit", in: m(0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0), fromClient: true, err: ErrLengthEncoding},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Header
			n, err := ParseHeader(tc.in, &h, tc.fromClient, tc.rsv1OK)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err == nil && (n != tc.n || h != tc.want) {
				t.Fatalf("got %d %+v, want %d %+v", n, h, tc.n, tc.want)
			}
		})
	}
}

func TestAppendHeaderRoundTrip(t *testing.T) {
	for _, l := range []int{0, 1, 125, 126, 127, 0xffff, 0x10000, 1 << 40} {
		for _, masked := range []bool{false, true} {
			b := AppendHeader(nil, true, false, OpBinary, l, masked, [4]byte{9, 8, 7, 6})
			var h Header
			n, err := ParseHeader(b, &h, masked, false)
			if err != nil || n != len(b) || h.Length != int64(l) || h.Masked != masked || !h.Fin || h.Op != OpBinary {
				t.Fatalf("length %d masked %v: %d %+v %v", l, masked, n, h, err)
			}
		}
	}
}

func TestMask(t *testing.T) {
	key := [4]byte{0x37, 0xfa, 0x21, 0x3d}
	for _, size := range []int{0, 1, 3, 7, 8, 9, 31, 32, 33, 100, 1000} {
		for _, split := range []int{0, 1, 2, 3, 5, 13} {
			if split > size {
				continue
			}
			data := make([]byte, size)
			for i := range data {
				data[i] = byte(i * 7)
			}
			want := make([]byte, size)
			for i := range data {
				want[i] = data[i] ^ key[i&3]
			}
			got := append([]byte(nil), data...)
			pos := Mask(key, 0, got[:split])
			if pos != split {
				t.Fatalf("pos %d, want %d", pos, split)
			}
			if end := Mask(key, pos, got[split:]); end != size {
				t.Fatalf("end %d, want %d", end, size)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("size %d split %d: mask differs", size, split)
			}
			// MaskCopy gives the same bytes into another buffer, src untouched.
			dst := make([]byte, size+3)
			pos = MaskCopy(key, 0, dst, data[:split])
			if end := MaskCopy(key, pos, dst[split:], data[split:]); end != size {
				t.Fatalf("MaskCopy end %d, want %d", end, size)
			}
			if !bytes.Equal(dst[:size], want) || !bytes.Equal(dst[size:], []byte{0, 0, 0}) {
				t.Fatalf("size %d split %d: MaskCopy differs", size, split)
			}
			for i := range data {
				if data[i] != byte(i*7) {
					t.Fatal("MaskCopy changed its source")
				}
			}
		}
	}
}

func BenchmarkMaskCopy16K(b *testing.B) {
	src, dst := make([]byte, 16<<10), make([]byte, 16<<10)
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		MaskCopy([4]byte{1, 2, 3, 4}, 0, dst, src)
	}
}

func BenchmarkCopyThenMask16K(b *testing.B) {
	src, dst := make([]byte, 16<<10), make([]byte, 16<<10)
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		copy(dst, src)
		Mask([4]byte{1, 2, 3, 4}, 0, dst)
	}
}

func TestClose(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		code int
		err  error
	}{
		{in: nil, code: CloseNoStatus},
		{in: []byte{0x03}, err: ErrClosePayload},
		{in: []byte{0x03, 0xE8}, code: 1000},
		{in: []byte{0x03, 0xE8, 'o', 'k'}, code: 1000},
		{in: []byte{0x0F, 0xA0}, code: 4000},
		{in: []byte{0x03, 0xEC}, err: ErrBadCloseCode},              // 1004
		{in: []byte{0x03, 0xED}, err: ErrBadCloseCode},              // 1005
		{in: []byte{0x03, 0xEE}, err: ErrBadCloseCode},              // 1006
		{in: []byte{0x03, 0xF7}, err: ErrBadCloseCode},              // 1015
		{in: []byte{0x03, 0xE7}, err: ErrBadCloseCode},              // 999
		{in: []byte{0x13, 0x88}, err: ErrBadCloseCode},              // 5000
		{in: []byte{0x03, 0xE8, 0xff}, err: ErrBadUTF8},             // bad reason
		{in: []byte{0x03, 0xE8, 0xed, 0xa0, 0x80}, err: ErrBadUTF8}, // surrogate
	} {
		code, _, err := ParseClose(tc.in)
		if !errors.Is(err, tc.err) || (err == nil && code != tc.code) {
			t.Errorf("ParseClose(% x) = %d, %v; want %d, %v", tc.in, code, err, tc.code, tc.err)
		}
	}
	long := AppendClose(nil, 1001, string(bytes.Repeat([]byte("é"), 100)))
	var h Header
	n, err := ParseHeader(long, &h, false, false)
	if err != nil || h.Length > 125 || !utf8.Valid(long[n+2:]) {
		t.Fatalf("long close reason: %v, length %d", err, h.Length)
	}
	if CloseCodeFor(ErrBadUTF8) != 1007 || CloseCodeFor(ErrMessageTooBig) != 1009 || CloseCodeFor(ErrUnmasked) != 1002 {
		t.Fatal("CloseCodeFor")
	}
}

func TestAcceptKey(t *testing.T) {
	// RFC 6455 §1.3's example.
	if got := AcceptKey("dGhlIHNhbXBsZSBub25jZQ=="); got != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatalf("AcceptKey = %q", got)
	}
	for key, want := range map[string]bool{
		"dGhlIHNhbXBsZSBub25jZQ==": true,
		"dGhlIHNhbXBsZSBub25jZQ":   false,
		"dGhlIHNhbXBsZSBub25jZQ=x": false,
		"!!!!!!!!!!!!!!!!!!!!!!==": false,
		"":                         false,
	} {
		if ValidKey(key) != want {
			t.Errorf("ValidKey(%q) = %v", key, !want)
		}
	}
}

func TestUTF8Validator(t *testing.T) {
	for _, s := range []string{"", "hello", "κόσμε", "\xf0\x9f\x98\x80 emoji", "\xed\x9f\xbf", "\xf4\x8f\xbf\xbf",
		"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80edited", "\xc0\xaf", "\xe0\x80\xaf", "\xf4\x90\x80\x80", "\xff", "a\x80b", "\xf0\x9f\x98"} {
		whole := utf8.ValidString(s)
		for split := 0; split <= len(s); split++ {
			for split2 := split; split2 <= len(s); split2++ {
				var v UTF8Validator
				ok := v.Write([]byte(s[:split])) && v.Write([]byte(s[split:split2])) && v.Write([]byte(s[split2:])) && v.Done()
				if ok != whole {
					t.Fatalf("%q split at %d, %d: %v, want %v", s, split, split2, ok, whole)
				}
			}
		}
	}
	// Fail fast: a piece that cannot become valid fails before the message ends.
	var v UTF8Validator
	if v.Write([]byte{0xce, 0xba, 0xed, 0xa0}) {
		t.Fatal("\\xed\\xa0 (a surrogate's start) accepted as a prefix")
	}
}

func FuzzParseHeader(f *testing.F) {
	f.Add([]byte{0x81, 0x85, 1, 2, 3, 4}, true)
	f.Add([]byte{0x82, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0}, false)
	f.Fuzz(func(t *testing.T, b []byte, fromClient bool) {
		var h Header
		n, err := ParseHeader(b, &h, fromClient, true)
		if err != nil {
			return
		}
		if n > len(b) || n > MaxHeaderLen || h.Length < 0 {
			t.Fatalf("n %d len %d header %+v", n, len(b), h)
		}
		// A parsed header appends back to the same bytes.
		re := AppendHeader(nil, h.Fin, h.RSV1, h.Op, int(h.Length), h.Masked, h.Mask)
		if !bytes.Equal(re, b[:n]) {
			t.Fatalf("re-encoded % x, parsed from % x", re, b[:n])
		}
	})
}

func FuzzUTF8Validator(f *testing.F) {
	f.Add([]byte("κόσμε"), uint8(3))
	f.Add([]byte{0xed, 0xa0, 0x80}, uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, split uint8) {
		s := int(split)
		if s > len(b) {
			s = len(b)
		}
		var v UTF8Validator
		first := v.Write(b[:s])
		ok := first && v.Write(b[s:]) && v.Done()
		if ok != utf8.Valid(b) {
			t.Fatalf("% x split %d: %v, utf8.Valid %v", b, s, ok, !ok)
		}
	})
}
