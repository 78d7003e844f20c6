package celerish3

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"golang.org/x/net/http2/hpack"
)

// The class of CVE-2025-64702 and CVE-2026-40898 (quic-go's HTTP/3 client and
// server): a peer sends a HEADERS frame small enough for every check on the
// encoded section, which QPACK decodes into a far larger field section (one
// byte per static-table field line, Huffman-coded literals), in a request's
// header section or its trailers. The decoded size (names, values and 32 bytes
// per field, RFC 9114 §4.2.2) is bounded by SETTINGS_MAX_FIELD_SECTION_SIZE in
// both: the decoder stops at the first field past it, and what it holds meanwhile
// is bounded by the encoded section times 8/5 (Huffman's shortest code is 5 bits).

// amplified returns a field section of the request pseudo-headers followed by
// n indexed field lines of static entry 31 (accept-encoding: gzip, deflate,
// br, RFC 9204 Appendix A): 1 byte each, 64 decoded.
func amplified(n int, pseudo bool) []byte {
	var b []byte
	if pseudo {
		b = block(get...)
	} else {
		b = []byte{0, 0} // Required Insert Count 0, Base 0
	}
	return append(b, bytes.Repeat([]byte{0xc0 | 31}, n)...)
}

// huffmanLiteral returns a field section of the request pseudo-headers and
// one field "x" whose value is n 'a's, Huffman-coded (5 bits each).
func huffmanLiteral(n int, pseudo bool) []byte {
	var b []byte
	if pseudo {
		b = block(get...)
	} else {
		b = []byte{0, 0}
	}
	b = append(b, 0x20|0x01, 'x') // §4.5.6: literal name "x", no Huffman
	v := hpack.AppendHuffmanString(nil, string(bytes.Repeat([]byte{'a'}, n)))
	b = appendPrefixInt(b, 0x80, 7, uint64(len(v))) // Huffman value
	return append(b, v...)
}

// TestQPACKDecodedSizeBounded: sections that are small encoded and large
// decoded are refused (errFieldsTooLarge) in headers and trailers, after at
// most maxSize/32 fields, with the arena never past 8/5 of the section.
func TestQPACKDecodedSizeBounded(t *testing.T) {
	const limit = 4 << 10
	for _, trailers := range []bool{false, true} {
		for _, tc := range []struct {
			name  string
			block []byte
		}{
			{name: "static lines", block: amplified(1000, !trailers)},
			{name: "huffman literal", block: huffmanLiteral(6000, !trailers)},
		} {
			if len(tc.block) > limit {
				t.Fatalf("%s: the encoded section (%d bytes) must be under the limit", tc.name, len(tc.block))
			}
			var s reqStream // its request, without naming the request type
			decode, kept := decodeRequestHead, &s.req.Header
			if trailers {
				decode, kept = decodeTrailers, &s.req.Trailer
			}
			if err := decode(tc.block, &s.req, limit, &s.arena); err != errFieldsTooLarge {
				t.Fatalf("%s (trailers %v): %v, want errFieldsTooLarge", tc.name, trailers, err)
			}
			if len(*kept) > limit/32 {
				t.Fatalf("%s (trailers %v): %d fields kept", tc.name, trailers, len(*kept))
			}
			if len(s.arena.b) > len(tc.block)*8/5 {
				t.Fatalf("%s (trailers %v): arena %d bytes for a %d-byte section", tc.name, trailers, len(s.arena.b), len(tc.block))
			}
		}
	}
}

// TestWireQPACKAmplification: over a real QUIC connection, a request whose
// header section decodes past SETTINGS_MAX_FIELD_SECTION_SIZE is answered 431
// (RFC 9114 §4.2.2), one whose trailers do has its stream reset with
// H3_EXCESSIVE_LOAD (the handler's body read fails), and the connection serves
// on.
func TestWireQPACKAmplification(t *testing.T) {
	const limit = 4 << 10
	c := dialRaw(t, wireServer(t, Config{MaxFieldSectionSize: limit}))
	c.control()
	for _, tc := range []struct {
		name  string
		block []byte
	}{
		{name: "static lines", block: amplified(1000, true)},
		{name: "huffman literal", block: huffmanLiteral(6000, true)},
	} {
		resp, err := c.request(frameBytes(frameHeaders, tc.block), true)
		if err != nil || status(t, resp) != "431" {
			t.Fatalf("%s headers: %q %v", tc.name, resp, err)
		}
	}
	for _, tc := range []struct {
		name  string
		block []byte
	}{
		{name: "static lines", block: amplified(1000, false)},
		{name: "huffman literal", block: huffmanLiteral(6000, false)},
	} {
		req := frameBytes(frameHeaders, block(":method", "POST", ":scheme", "https", ":path", "/read", ":authority", "a"))
		req = append(req, frameBytes(frameData, []byte("ab"))...)
		req = append(req, frameBytes(frameHeaders, tc.block)...)
		s, err := c.qc.OpenStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = s.Write(req)
		_ = s.Close()
		_ = s.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := io.ReadAll(s)
		if code := streamCode(err); code != ErrCodeExcessiveLoad {
			t.Fatalf("%s trailers: %q %v, want a reset with H3_EXCESSIVE_LOAD", tc.name, resp, err)
		}
	}
	if resp, err := c.request(getHeaders, true); err != nil || status(t, resp) != "200" {
		t.Fatalf("after: %q %v", resp, err)
	}
}
