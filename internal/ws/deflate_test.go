package ws

import (
	"bytes"
	"compress/flate"
	"errors"
	"strings"
	"testing"
)

func TestNegotiateDeflate(t *testing.T) {
	for _, tc := range []struct {
		offers   []string
		takeover bool
		ok       bool
		resp     string
	}{
		{offers: []string{"permessage-deflate"}, ok: true, resp: "permessage-deflate; server_no_context_takeover; client_no_context_takeover"},
		{offers: []string{"permessage-deflate"}, takeover: true, ok: true, resp: "permessage-deflate"},
		{offers: []string{"permessage-deflate; client_max_window_bits"}, takeover: true, ok: true, resp: "permessage-deflate"},
		{offers: []string{"permessage-deflate; client_max_window_bits=10; server_no_context_takeover"}, takeover: true, ok: true, resp: "permessage-deflate; server_no_context_takeover"},
		{offers: []string{"permessage-deflate; client_no_context_takeover"}, takeover: true, ok: true, resp: "permessage-deflate; client_no_context_takeover"},
		{offers: []string{"permessage-deflate; server_max_window_bits=15"}, takeover: true, ok: true, resp: "permessage-deflate"},
		// Declined offers; a later acceptable one is taken.
		{offers: []string{"permessage-deflate; server_max_window_bits=10, permessage-deflate"}, takeover: true, ok: true, resp: "permessage-deflate"},
		{offers: []string{"permessage-deflate; server_max_window_bits=10"}, ok: false},
		{offers: []string{"permessage-deflate; server_max_window_bits"}, ok: false},
		{offers: []string{"permessage-deflate; client_max_window_bits=16"}, ok: false},
		{offers: []string{"permessage-deflate; unknown=1"}, ok: false},
		{offers: []string{"permessage-deflate; server_no_context_takeover; server_no_context_takeover"}, ok: false},
		{offers: []string{"permessage-deflate; server_no_context_takeover=1"}, ok: false},
		{offers: []string{"x-webkit-deflate-frame"}, ok: false},
		{offers: nil, ok: false},
	} {
		p, ok := NegotiateDeflate(tc.offers, tc.takeover)
		if ok != tc.ok || (ok && p.Response() != tc.resp) {
			t.Errorf("%q takeover=%v: %v %q, want %v %q", tc.offers, tc.takeover, ok, p.Response(), tc.ok, tc.resp)
		}
	}
}

// clientCompress compresses messages as a client with context takeover does: one
// flate writer for the whole connection, each message sync-flushed, tail removed.
type clientCompress struct {
	buf bytes.Buffer
	fw  *flate.Writer
}

func (c *clientCompress) message(p []byte) []byte {
	if c.fw == nil {
		c.fw, _ = flate.NewWriter(&c.buf, flate.BestCompression)
	}
	c.buf.Reset()
	c.fw.Write(p)
	c.fw.Flush()
	return append([]byte(nil), bytes.TrimSuffix(c.buf.Bytes(), deflateTail)...)
}

// TestDeflateRoundTrip: messages compressed with context takeover (later ones
// refer back into earlier ones) inflate right, and what the server compresses
// inflates to the original, with and without takeover.
func TestDeflateRoundTrip(t *testing.T) {
	msgs := [][]byte{
		[]byte(strings.Repeat("hello celeris ", 100)),
		[]byte(strings.Repeat("hello celeris ", 100)), // refers into the previous message
		{},
		bytes.Repeat([]byte{0xfe, 0x01}, 40000), // over the 32 KiB window
		[]byte("hello celeris hello celeris"),
	}
	var cc clientCompress
	server := &Deflate{}
	for i, m := range msgs {
		comp := cc.message(m)
		got, err := server.Inflate(nil, comp, 1<<20)
		if err != nil || !bytes.Equal(got, m) {
			t.Fatalf("message %d: %v, %d bytes, want %d", i, err, len(got), len(m))
		}
		if i == 1 && len(comp) > 20 {
			t.Fatalf("the repeated message took %d bytes: no context takeover", len(comp))
		}
	}
	for _, takeover := range []bool{false, true} {
		d := &Deflate{Params: DeflateParams{ServerNoContextTakeover: !takeover}}
		client := &Deflate{Params: DeflateParams{ClientNoContextTakeover: !takeover}} // inflates what d sends
		for i, m := range msgs {
			comp := d.Compress(nil, m)
			got, err := client.Inflate(nil, comp, 1<<20)
			if err != nil || !bytes.Equal(got, m) {
				t.Fatalf("takeover=%v message %d: %v, %d bytes, want %d", takeover, i, err, len(got), len(m))
			}
		}
	}
}

func TestInflateLimits(t *testing.T) {
	var cc clientCompress
	bomb := cc.message(make([]byte, 4<<20)) // 4 MiB of zeros: a few KiB compressed
	if _, err := (&Deflate{}).Inflate(nil, bomb, 1<<20); !errors.Is(err, ErrMessageTooBig) {
		t.Fatalf("a 4 MiB message under a 1 MiB limit: %v", err)
	}
	if _, err := (&Deflate{}).Inflate(nil, []byte{0xff, 0xff, 0xff}, 1<<20); !errors.Is(err, ErrInflate) {
		t.Fatalf("garbage: %v", err)
	}
}

func FuzzInflate(f *testing.F) {
	var cc clientCompress
	f.Add(cc.message([]byte("hello hello hello")))
	f.Add([]byte{0x00})
	f.Fuzz(func(t *testing.T, p []byte) {
		out, err := (&Deflate{}).Inflate(nil, p, 1<<16)
		if err == nil && len(out) > 1<<16 {
			t.Fatalf("%d bytes past the limit", len(out))
		}
	})
}
