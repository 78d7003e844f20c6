package h2

import (
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

func TestAppendUnique(t *testing.T) {
	for i, name := range uniqueNames {
		for _, value := range []string{"", "v", strings.Repeat("a1", 63), strings.Repeat("z", 300), strings.Repeat("q", 20000)} {
			b := appendUnique(nil, i, value)
			got, err := hpack.NewDecoder(4096, nil).DecodeFull(b)
			if err != nil {
				t.Fatalf("%s=%d bytes: %v", name, len(value), err)
			}
			want := hpack.HeaderField{Name: name, Value: value, Sensitive: true}
			if len(got) != 1 || got[0] != want {
				t.Fatalf("%s=%d bytes: got %+v", name, len(value), got)
			}
		}
	}
}

func TestUniqueIndex(t *testing.T) {
	for i, name := range uniqueNames {
		if got := uniqueIndex(name); got != i {
			t.Errorf("%s: %d", name, got)
		}
		if got := uniqueIndex(strings.ToUpper(name)); got != i {
			t.Errorf("%s upper: %d", name, got)
		}
	}
	for _, name := range []string{"", "content-type", "x-request-ie", "etags", "content-length", strings.Repeat("x", 40)} {
		if got := uniqueIndex(name); got != -1 {
			t.Errorf("%q: %d", name, got)
		}
	}
}

// TestUniqueFieldsAcrossResponses sends per-response fields (a request id, a
// cookie, a location) beside cacheable ones over several responses, so the
// cached head and the never-indexed literals interleave.
func TestUniqueFieldsAcrossResponses(t *testing.T) {
	for _, inline := range []bool{true, false} {
		n := 0
		h := handlerFunc{
			inline: func(*httpmsg.Request) bool { return inline },
			serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
				n++
				id := strings.Repeat("id", n*40) // crosses the 7-bit length prefix
				_ = w.WriteResponse(200, []httpmsg.Field{
					{Name: "X-Request-ID", Value: id},
					{Name: "Content-Type", Value: "text/plain"},
					{Name: "Set-Cookie", Value: "s=" + id[:n]},
					{Name: "Vary", Value: "Origin"},
					{Name: "ETAG", Value: `"e"`},
				}, []byte("ok"))
			},
		}
		hs := newHarness(t, h, nil)
		hs.handshake()
		for i := 1; i <= 4; i++ {
			id := uint32(2*i - 1)
			hs.send(frame.AppendHeaders(nil, id, true, true, hs.get("/x")))
			r := hs.response(id)
			wantID := strings.Repeat("id", i*40)
			if r.status != "200" || r.header["x-request-id"] != wantID || r.header["content-type"] != "text/plain" ||
				r.header["set-cookie"] != "s="+wantID[:i] || r.header["vary"] != "Origin" || r.header["etag"] != `"e"` ||
				r.header["content-length"] != "2" || string(r.body) != "ok" {
				t.Fatalf("inline=%v response %d: %+v", inline, i, r)
			}
		}
	}
}

func TestTableNeutral(t *testing.T) {
	for _, c := range []struct {
		p    []byte
		want bool
	}{
		{nil, false},
		{[]byte{0x82}, true},
		{[]byte{0x82, 0x86, 0xbe}, true},
		{[]byte{0xff, 0x80, 0x01}, true},                 // index 127+128
		{[]byte{0xff, 0x80}, false},                      // truncated integer
		{[]byte{0x82, 0x44, 0x01, 'a'}, false},           // literal with incremental indexing
		{[]byte{0x20, 0x82}, false},                      // table size update
		{[]byte{0x82, 0x04, 0x02, '/', 'a'}, true},       // without indexing, indexed name
		{[]byte{0x82, 0x14, 0x02, '/', 'a'}, true},       // never indexed, indexed name
		{[]byte{0x00, 0x01, 'x', 0x01, 'y', 0x82}, true}, // without indexing, new name
		{[]byte{0x10, 0x01, 'x', 0x81, 0xff}, true},      // Huffman value
		{[]byte{0x04, 0x05, '/', 'a'}, false},            // string past the end
		{[]byte{0x00, 0x01, 'x'}, false},                 // value missing
		{[]byte{0x0f, 0x80}, false},                      // truncated name index
	} {
		if got := tableNeutral(c.p); got != c.want {
			t.Errorf("%x: %v", c.p, got)
		}
	}
}

// TestDecodeCacheFollowsTable repeats an indexed-only block (served from the
// decode cache) around a block that changes what its index refers to.
func TestDecodeCacheFollowsTable(t *testing.T) {
	var paths []string
	h := handlerFunc{
		inline: func(*httpmsg.Request) bool { return true },
		serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
			paths = append(paths, r.Path)
			_ = w.WriteResponse(204, nil, nil)
		},
	}
	hs := newHarness(t, h, nil)
	hs.handshake()
	insertA := []byte{0x82, 0x86, 0x44, 0x02, '/', 'a'} // :path /a, indexed as 62
	indexed := []byte{0x82, 0x86, 0xbe}                 // GET http, index 62
	insertB := []byte{0x82, 0x86, 0x44, 0x02, '/', 'b'} // :path /b is 62 now
	literal := []byte{0x82, 0x86, 0x04, 0x02, '/', 'c'} // :path /c, not indexed
	blocks := [][]byte{insertA, indexed, indexed, insertB, indexed, indexed, literal, literal, indexed}
	for i, b := range blocks {
		id := uint32(2*i + 1)
		hs.send(frame.AppendHeaders(nil, id, true, true, b))
		if r := hs.response(id); r.status != "204" {
			t.Fatalf("block %d: %+v", i, r)
		}
	}
	if got := strings.Join(paths, " "); got != "/a /a /a /b /b /b /c /c /b" {
		t.Fatalf("paths %s", got)
	}
	if !hs.c.dc.ok || string(hs.c.dc.block) != string(indexed) {
		t.Fatal("the indexed-only block was not cached")
	}
}

// TestInvalidResponseFieldsDropped: fields a handler sets with CR, LF or NUL in
// the value, or a name that is not a token, are dropped (RFC 9113 §8.2.1), as the
// HTTP/1.1 writer drops them; the rest of the head and the trailers go out.
func TestInvalidResponseFieldsDropped(t *testing.T) {
	for _, inline := range []bool{true, false} {
		h := handlerFunc{
			inline: func(*httpmsg.Request) bool { return inline },
			serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
				_ = w.WriteHeader(200, []httpmsg.Field{
					{Name: "X-Ok", Value: "1"},
					{Name: "X-Bad", Value: "a\r\nInjected: 1"},
					{Name: "Bad Name", Value: "x"},
					{Name: "X-Request-ID", Value: "id\x00"},
					{Name: "X-Nul", Value: "\x00"},
				})
				_, _ = w.Write([]byte("b"))
				_ = w.End([]httpmsg.Field{{Name: "X-T", Value: "ok"}, {Name: "X-T2", Value: "no\n"}})
			},
		}
		hs := newHarness(t, h, nil)
		hs.handshake()
		hs.send(frame.AppendHeaders(nil, 1, true, true, hs.get("/x")))
		r := hs.response(1)
		if r.header["x-ok"] != "1" || len(r.header) != 2 || r.trailer["x-t"] != "ok" || len(r.trailer) != 1 {
			t.Fatalf("inline=%v: header %v trailer %v", inline, r.header, r.trailer)
		}
	}
}
