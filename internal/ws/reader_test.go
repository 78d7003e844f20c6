package ws

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// clientFrame is a masked frame as a client sends it.
func clientFrame(fin bool, op Opcode, payload []byte) []byte {
	key := [4]byte{0xa1, 0xb2, 0xc3, 0xd4}
	b := AppendHeader(nil, fin, false, op, len(payload), true, key)
	start := len(b)
	b = append(b, payload...)
	Mask(key, 0, b[start:])
	return b
}

// recorder is an Events that writes what it got as text.
type recorder struct{ log []string }

func (r *recorder) Message(op Opcode, p []byte, comp bool) error {
	r.log = append(r.log, fmt.Sprintf("msg %d %q", op, p))
	return nil
}

func (r *recorder) Control(op Opcode, p []byte) error {
	r.log = append(r.log, fmt.Sprintf("ctl %d %q", op, p))
	return nil
}

func cat(frames ...[]byte) []byte { return bytes.Join(frames, nil) }

// TestReader follows the Autobahn test suite's sections 1 (framing), 2 (pings), 3
// (reserved bits), 4 (opcodes), 5 (fragmentation), 6 (UTF-8) and 7 (close) at the
// codec level: each case is the exact bytes a client sends, the events reported
// and the error (its close code) if the connection must fail.
func TestReader(t *testing.T) {
	big := bytes.Repeat([]byte("*"), 65536)
	for _, tc := range []struct {
		name string
		in   []byte
		want []string
		err  error
		max  int64
	}{
		{name: "1.1.1 empty text", in: clientFrame(true, OpText, nil), want: []string{`msg 1 ""`}},
		{name: "1.1.2 text 125", in: clientFrame(true, OpText, bytes.Repeat([]byte("*"), 125)), want: []string{`msg 1 "` + strings.Repeat("*", 125) + `"`}},
		{name: "1.2.6 binary 65536", in: clientFrame(true, OpBinary, big), want: []string{fmt.Sprintf("msg 2 %q", big)}},
		{name: "2.1 ping empty", in: clientFrame(true, OpPing, nil), want: []string{`ctl 9 ""`}},
		{name: "2.3 ping binary", in: clientFrame(true, OpPing, []byte{0, 0xff, 0xfe}), want: []string{`ctl 9 "\x00\xff\xfe"`}},
		{name: "2.5 ping 126", in: clientFrame(true, OpPing, bytes.Repeat([]byte("x"), 126)), err: ErrControlTooLong},
		{name: "2.10 ten pings", in: bytes.Repeat(clientFrame(true, OpPing, []byte("p")), 10), want: repeat(`ctl 9 "p"`, 10)},
		{name: "3.1 rsv1", in: cat(clientFrame(true, OpText, []byte("a")), withRSV(clientFrame(true, OpText, []byte("b")), 0x40)), want: []string{`msg 1 "a"`}, err: ErrReservedBits},
		{name: "3.2 rsv2", in: withRSV(clientFrame(true, OpText, []byte("b")), 0x20), err: ErrReservedBits},
		{name: "3.7 rsv on ping", in: withRSV(clientFrame(true, OpPing, nil), 0x70), err: ErrReservedBits},
		{name: "4.1.1 opcode 3", in: clientFrame(true, 3, nil), err: ErrReservedOpcode},
		{name: "4.2.1 opcode 11", in: clientFrame(true, 11, nil), err: ErrReservedOpcode},
		{name: "5.1 fragmented ping", in: clientFrame(false, OpPing, []byte("a")), err: ErrControlFragment},
		{name: "5.3 text in two fragments", in: cat(clientFrame(false, OpText, []byte("frag")), clientFrame(true, OpContinuation, []byte("ment"))), want: []string{`msg 1 "fragment"`}},
		{name: "5.6 ping between fragments", in: cat(clientFrame(false, OpText, []byte("fr")), clientFrame(true, OpPing, []byte("p")), clientFrame(true, OpContinuation, []byte("ag"))), want: []string{`ctl 9 "p"`, `msg 1 "frag"`}},
		{name: "5.9 continuation first", in: clientFrame(true, OpContinuation, []byte("x")), err: ErrContinuation},
		{name: "5.18 text inside text", in: cat(clientFrame(false, OpText, []byte("a")), clientFrame(true, OpText, []byte("b"))), err: ErrFragmentStart},
		{name: "5.19 many fragments with pings", in: cat(clientFrame(false, OpText, []byte("1")), clientFrame(false, OpContinuation, []byte("2")), clientFrame(true, OpPing, nil), clientFrame(false, OpContinuation, []byte("3")), clientFrame(true, OpContinuation, []byte("4"))), want: []string{`ctl 9 ""`, `msg 1 "1234"`}},
		{name: "6.2 valid UTF-8 split mid-rune", in: cat(clientFrame(false, OpText, []byte("κό\xcf")), clientFrame(true, OpContinuation, []byte("\x83με"))), want: []string{`msg 1 "κόσμε"`}},
		{name: "6.3 invalid UTF-8", in: clientFrame(true, OpText, []byte("κόσμε\xed\xa0\x80edited")), err: ErrBadUTF8},
		{name: "6.4 fail fast in the first fragment", in: clientFrame(false, OpText, []byte("κ\xed\xa0")), err: ErrBadUTF8},
		{name: "6.x text ends mid-rune", in: clientFrame(true, OpText, []byte("a\xce")), err: ErrBadUTF8},
		{name: "6.x binary is not checked", in: clientFrame(true, OpBinary, []byte{0xff}), want: []string{`msg 2 "\xff"`}},
		{name: "7.1.1 close", in: clientFrame(true, OpClose, []byte{0x03, 0xe8}), want: []string{`ctl 8 "\x03\xe8"`}},
		{name: "7.3.1 close empty", in: clientFrame(true, OpClose, nil), want: []string{`ctl 8 ""`}},
		{name: "7.3.2 close 1 byte", in: clientFrame(true, OpClose, []byte{3}), err: ErrClosePayload},
		{name: "7.5.1 close bad reason", in: clientFrame(true, OpClose, []byte{0x03, 0xe8, 0xce, 0xba, 0xe1, 0xbd}), err: ErrBadUTF8},
		{name: "7.9.x close 1005", in: clientFrame(true, OpClose, []byte{0x03, 0xed}), err: ErrBadCloseCode},
		{name: "7.9.x close 999", in: clientFrame(true, OpClose, []byte{0x03, 0xe7}), err: ErrBadCloseCode},
		{name: "7.13 close 5000", in: clientFrame(true, OpClose, []byte{0x13, 0x88}), err: ErrBadCloseCode},
		{name: "unmasked", in: AppendFrame(nil, true, OpText, []byte("x")), err: ErrUnmasked},
		{name: "9.x message over the limit", in: clientFrame(true, OpBinary, make([]byte, 100)), max: 64, err: ErrMessageTooBig},
		{name: "9.x fragments over the limit", in: cat(clientFrame(false, OpBinary, make([]byte, 40)), clientFrame(true, OpContinuation, make([]byte, 40))), max: 64, err: ErrMessageTooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Whole, then one byte at a time: the result must not depend on how
			// the bytes arrive.
			for _, step := range []int{len(tc.in), 1, 7} {
				r := Reader{MaxMessage: tc.max}
				var rec recorder
				var err error
				pending := []byte(nil)
				for i := 0; i < len(tc.in) && err == nil; i += max(step, 1) {
					pending = append(pending, tc.in[i:min(i+max(step, 1), len(tc.in))]...)
					var n int
					n, err = r.Feed(pending, &rec)
					pending = pending[n:]
				}
				if !errors.Is(err, tc.err) {
					t.Fatalf("step %d: err %v, want %v (events %q)", step, err, tc.err, rec.log)
				}
				if fmt.Sprint(rec.log) != fmt.Sprint(tc.want) {
					t.Fatalf("step %d: events %q, want %q", step, rec.log, tc.want)
				}
				if tc.err == nil && len(pending) != 0 {
					t.Fatalf("step %d: %d bytes left unconsumed", step, len(pending))
				}
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func withRSV(f []byte, bits byte) []byte {
	f[0] |= bits
	return f
}

func FuzzReader(f *testing.F) {
	f.Add(cat(clientFrame(false, OpText, []byte("fr")), clientFrame(true, OpPing, []byte("p")), clientFrame(true, OpContinuation, []byte("ag"))), uint8(3))
	f.Add(clientFrame(true, OpClose, []byte{0x03, 0xe8, 'o', 'k'}), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		st := int(step%16) + 1
		whole := Reader{MaxMessage: 1 << 16}
		var a recorder
		n, errA := whole.Feed(in, &a)
		if n > len(in) {
			t.Fatalf("consumed %d of %d", n, len(in))
		}
		pieces := Reader{MaxMessage: 1 << 16}
		var b recorder
		var errB error
		var pending []byte
		for i := 0; i < len(in) && errB == nil; i += st {
			pending = append(pending, in[i:min(i+st, len(in))]...)
			var k int
			k, errB = pieces.Feed(pending, &b)
			pending = pending[k:]
		}
		if (errA == nil) != (errB == nil) || fmt.Sprint(a.log) != fmt.Sprint(b.log) {
			t.Fatalf("whole: %v %q; in steps of %d: %v %q", errA, a.log, st, errB, b.log)
		}
	})
}
