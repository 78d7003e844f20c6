package h2

import (
	"bytes"
	"encoding/binary"
	"io"
	"reflect"
	"testing"

	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// fuzzHandler answers inline or on a worker depending on the path, reading any
// body.
var fuzzHandler = handlerFunc{
	inline: func(r *httpmsg.Request) bool { return r.Path == "/i" },
	serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		if r.BodyReader != nil {
			_, _ = io.Copy(io.Discard, r.BodyReader)
		}
		if r.RawQuery == "stream" {
			_ = w.WriteHeader(200, nil)
			_, _ = w.Write(bytes.Repeat([]byte("s"), 70000))
			_ = w.End([]httpmsg.Field{{Name: "x-t", Value: "1"}})
			return
		}
		_ = w.WriteResponse(200, []httpmsg.Field{{Name: "X-A", Value: "b"}}, bytes.Repeat([]byte("x"), len(r.Body)+100))
	},
}

// FuzzConn feeds frame sequences built from the input, after a valid preface, to a
// Conn: it must never panic, and its stream and queue bookkeeping stays bounded.
func FuzzConn(f *testing.F) {
	f.Add([]byte{0, 1, 1, 2, 3, 4})
	f.Add([]byte{0, 0, 1, 0, 2, 0, 3, 1, 5, 1, 6})
	f.Add([]byte{1, 1, 0, 9, 1, 4, 0, 0, 7, 1, 2, 1})
	f.Add([]byte{2, 3, 0x10, 3, 5, 2, 0xff, 4, 4, 8, 8, 0, 1, 0xaa})
	f.Add(bytes.Repeat([]byte{0, 7, 3}, 30))
	// CVE-2025-8671 (MadeYouReset): requests reset by the server at once, through
	// WINDOW_UPDATE increment 0, DATA on a half-closed stream, a bad :authority.
	var myr []byte
	for _, a := range []byte{1, 4, 7, 10, 13} {
		myr = append(myr, 0, a, 1, 4, a, 0, 0, a+1, 1, 1, a+1, 1, 0, a+2, 0x21<<2|1)
	}
	f.Add(myr)
	f.Fuzz(func(t *testing.T, ops []byte) {
		fc := newFakeConn()
		c := NewConn(fc, fuzzHandler, testPool, &Config{MaxConcurrentStreams: 8, MaxRequestBodySize: 50000})
		defer c.OnClose(nil)
		var enc bytes.Buffer
		henc := hpack.NewEncoder(&enc)
		block := func(sel byte) []byte {
			enc.Reset()
			paths := []string{"/i", "/w", "/w?stream", "/i?x", ""}
			fields := [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", paths[int(sel)%len(paths)]}}
			if sel&0x08 != 0 {
				authorities := []string{"example.com:80", "u@h", "h:x", "[::1]:1"}
				fields = append(fields, [2]string{":authority", authorities[int(sel>>1)%len(authorities)]})
			}
			if sel&0x10 != 0 {
				fields = append(fields, [2]string{"content-length", "5"})
			}
			if sel&0x20 != 0 {
				fields = append(fields, [2]string{"Bad", "x"})
			}
			if sel&0x40 != 0 {
				fields = [][2]string{{"x-trailer", "v"}}
			}
			for _, fl := range fields {
				_ = henc.WriteField(hpack.HeaderField{Name: fl[0], Value: fl[1]})
			}
			return bytes.Clone(enc.Bytes())
		}
		in := append([]byte(clientPreface), frame.AppendSettings(nil)...)
		var pending []byte
		feed := func(b []byte) bool {
			pending = append(pending, b...)
			n, err := c.OnData(pending)
			pending = pending[n:]
			select {
			case <-fc.wake:
				if err == nil {
					err = c.OnWake()
				}
			default:
			}
			fc.take()
			if c.streams.len() > 8 || len(c.sendq) > 16 || len(c.waiting) > 8 || c.handlers > 8 || len(pending) > 1<<20 {
				t.Fatalf("unbounded: %d streams, %d sendq, %d waiting, %d handlers, %d pending",
					c.streams.len(), len(c.sendq), len(c.waiting), c.handlers, len(pending))
			}
			return err == nil
		}
		if !feed(in) {
			t.Fatal("handshake failed")
		}
		for i := 0; i+2 < len(ops); i += 3 {
			op, a, b := ops[i], ops[i+1], ops[i+2]
			id := uint32(a%16)*2 + 1
			var fr []byte
			switch op % 12 {
			case 0:
				fr = frame.AppendHeaders(nil, id, b&1 != 0, b&2 == 0, block(b>>2))
			case 1:
				fr = frame.AppendData(nil, id, b&1 != 0, make([]byte, int(b)*40))
			case 2:
				fr = frame.AppendContinuation(nil, id, b&1 != 0, block(b>>1))
			case 3:
				fr = frame.AppendRSTStream(nil, id, frame.ErrCode(b%14))
			case 4:
				fr = frame.AppendWindowUpdate(nil, uint32(a%3)*id, uint32(b)<<uint(a%24))
			case 5:
				fr = frame.AppendSettings(nil, frame.Setting{ID: frame.SettingID(a % 8), Val: uint32(b) << uint(b%28)})
			case 6:
				fr = frame.AppendPing(nil, b&1 != 0, [8]byte{a, b})
			case 7:
				fr = frame.AppendPriority(nil, id, frame.Priority{StreamDep: uint32(b % 8), Weight: a})
			case 8:
				fr = frame.AppendDataPadded(nil, id, b&1 != 0, make([]byte, int(b)), a)
			case 9:
				fr = frame.AppendRaw(nil, frame.Type(a), frame.Flags(b), id, ops[i:])
			case 10:
				// Let handlers run and answers drain.
				if !feed(nil) {
					return
				}
				continue
			case 11:
				fr = make([]byte, 9)
				binary.BigEndian.PutUint32(fr, uint32(a)<<8|uint32(b))
				fr = append(fr[:9], ops[i:]...)
			}
			if !feed(fr) {
				return
			}
		}
	})
}

// FuzzTableNeutral checks the decode cache's premise: a block that tableNeutral
// accepts and the decoder decodes leaves the dynamic table as it was, so
// decoding it again gives the same fields.
func FuzzTableNeutral(f *testing.F) {
	f.Add([]byte{0x82, 0x86, 0xbe})
	f.Add([]byte{0x82, 0x04, 0x02, '/', 'a', 0xbf})
	f.Add([]byte{0x10, 0x01, 'x', 0x81, 0xff, 0xc0})
	f.Add([]byte{0x44, 0x01, 'a'})
	f.Fuzz(func(t *testing.T, p []byte) {
		if !tableNeutral(p) {
			return
		}
		d := hpack.NewDecoder(4096, nil)
		// Three entries in the dynamic table: 62 x=3, 63 x=2, 64 x=1.
		if _, err := d.DecodeFull([]byte{0x40, 1, 'x', 1, '1', 0x40, 1, 'x', 1, '2', 0x40, 1, 'x', 1, '3'}); err != nil {
			t.Fatal(err)
		}
		probe := []byte{0xbe, 0xbf, 0xc0}
		before, err := d.DecodeFull(probe)
		if err != nil {
			t.Fatal(err)
		}
		first, err := d.DecodeFull(p)
		if err != nil {
			return
		}
		second, err := d.DecodeFull(p)
		if err != nil {
			t.Fatalf("second decode: %v", err)
		}
		if !reflect.DeepEqual(first, second) {
			t.Fatalf("%x decoded to %v then %v", p, first, second)
		}
		after, err := d.DecodeFull(probe)
		if err != nil || !reflect.DeepEqual(before, after) {
			t.Fatalf("%x changed the table: %v -> %v (%v)", p, before, after, err)
		}
	})
}
