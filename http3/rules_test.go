package celerish3

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go/quicvarint"
)

// block QPACK-encodes fields given as name, value pairs (static table and
// literals, as the server's peer with a zero-capacity table does).
func block(kv ...string) []byte {
	var buf bytes.Buffer
	enc := qpack.NewEncoder(&buf)
	for i := 0; i < len(kv); i += 2 {
		_ = enc.WriteField(qpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return buf.Bytes()
}

func frameBytes(typ uint64, payload []byte) []byte {
	return append(appendFrameHeader(nil, typ, uint64(len(payload))), payload...)
}

func varints(v ...uint64) []byte {
	var b []byte
	for _, x := range v {
		b = quicvarint.Append(b, x)
	}
	return b
}

// wantCode checks that err is a connection (conn) or stream error with code;
// code 0 wants no error.
func wantCode(t *testing.T, name string, err error, code ErrCode, conn bool) {
	t.Helper()
	if code == 0 {
		if err != nil {
			t.Errorf("%s: unexpected error %v", name, err)
		}
		return
	}
	got, isConn, ok := codeOf(err)
	if !ok || got != code || isConn != conn {
		t.Errorf("%s: got %v, want %v (connection error: %v)", name, err, code, conn)
	}
}

var get = []string{":method", "GET", ":scheme", "https", ":path", "/a?b=c", ":authority", "example.com"}

func with(extra ...string) []string { return append(append([]string{}, get...), extra...) }

// TestDecodeRequestHead: RFC 9114 §4.2 and §4.3.1 — a malformed request is a
// stream error of type H3_MESSAGE_ERROR.
func TestDecodeRequestHead(t *testing.T) {
	tests := []struct {
		name   string
		fields []string
		code   ErrCode
	}{
		{name: "valid GET", fields: with("accept", "*/*")},
		{name: "valid OPTIONS *", fields: []string{":method", "OPTIONS", ":scheme", "https", ":path", "*", ":authority", "a"}},
		{name: "valid CONNECT", fields: []string{":method", "CONNECT", ":authority", "example.com:443"}},
		{name: "valid Host without :authority", fields: []string{":method", "GET", ":scheme", "https", ":path", "/", "host", "a.example"}},
		{name: "te: trailers", fields: with("te", "trailers")},
		{name: "repeated equal content-length", fields: with("content-length", "3", "content-length", "3")},
		{name: "missing :method", fields: []string{":scheme", "https", ":path", "/", ":authority", "a"}, code: ErrCodeMessage},
		{name: "missing :scheme", fields: []string{":method", "GET", ":path", "/", ":authority", "a"}, code: ErrCodeMessage},
		{name: "missing :path", fields: []string{":method", "GET", ":scheme", "https", ":authority", "a"}, code: ErrCodeMessage},
		{name: "empty :path", fields: []string{":method", "GET", ":scheme", "https", ":path", "", ":authority", "a"}, code: ErrCodeMessage},
		{name: "relative :path", fields: []string{":method", "GET", ":scheme", "https", ":path", "a", ":authority", "a"}, code: ErrCodeMessage},
		{name: "* for GET", fields: []string{":method", "GET", ":scheme", "https", ":path", "*", ":authority", "a"}, code: ErrCodeMessage},
		{name: "repeated :method", fields: with(":method", "GET"), code: ErrCodeMessage},
		{name: "pseudo after regular", fields: []string{":method", "GET", ":scheme", "https", "accept", "*/*", ":path", "/", ":authority", "a"}, code: ErrCodeMessage},
		{name: ":status in a request", fields: with(":status", "200"), code: ErrCodeMessage},
		{name: "unknown pseudo", fields: with(":foo", "x"), code: ErrCodeMessage},
		{name: "valid extended CONNECT", fields: []string{":method", "CONNECT", ":protocol", "websocket", ":scheme", "https", ":path", "/ws", ":authority", "a"}},
		{name: ":protocol on GET", fields: with(":protocol", "websocket"), code: ErrCodeMessage},
		{name: "extended CONNECT without :path", fields: []string{":method", "CONNECT", ":protocol", "websocket", ":scheme", "https", ":authority", "a"}, code: ErrCodeMessage},
		{name: "extended CONNECT with relative :path", fields: []string{":method", "CONNECT", ":protocol", "websocket", ":scheme", "https", ":path", "ws", ":authority", "a"}, code: ErrCodeMessage},
		{name: "repeated :protocol", fields: []string{":method", "CONNECT", ":protocol", "websocket", ":protocol", "websocket", ":scheme", "https", ":path", "/", ":authority", "a"}, code: ErrCodeMessage},
		{name: "CONNECT with :path", fields: []string{":method", "CONNECT", ":authority", "a:1", ":path", "/"}, code: ErrCodeMessage},
		{name: "CONNECT without :authority", fields: []string{":method", "CONNECT"}, code: ErrCodeMessage},
		{name: "no authority nor host", fields: []string{":method", "GET", ":scheme", "https", ":path", "/"}, code: ErrCodeMessage},
		{name: ":authority and host differ", fields: with("host", "other.example"), code: ErrCodeMessage},
		{name: "authority with userinfo", fields: []string{":method", "GET", ":scheme", "https", ":path", "/", ":authority", "u@a"}, code: ErrCodeMessage},
		{name: "upper-case field name", fields: with("Accept", "*/*"), code: ErrCodeMessage},
		{name: "field name not a token", fields: with("a b", "x"), code: ErrCodeMessage},
		{name: "value with LF", fields: with("x", "a\nb"), code: ErrCodeMessage},
		{name: "value with NUL", fields: with("x", "a\x00b"), code: ErrCodeMessage},
		{name: "value with leading space", fields: with("x", " a"), code: ErrCodeMessage},
		{name: "connection", fields: with("connection", "close"), code: ErrCodeMessage},
		{name: "keep-alive", fields: with("keep-alive", "1"), code: ErrCodeMessage},
		{name: "proxy-connection", fields: with("proxy-connection", "x"), code: ErrCodeMessage},
		{name: "transfer-encoding", fields: with("transfer-encoding", "chunked"), code: ErrCodeMessage},
		{name: "upgrade", fields: with("upgrade", "websocket"), code: ErrCodeMessage},
		{name: "te: gzip", fields: with("te", "gzip"), code: ErrCodeMessage},
		{name: "content-length not a number", fields: with("content-length", "x"), code: ErrCodeMessage},
		{name: "content-length values differ", fields: with("content-length", "1", "content-length", "2"), code: ErrCodeMessage},
		{name: "bad method token", fields: []string{":method", "G T", ":scheme", "https", ":path", "/", ":authority", "a"}, code: ErrCodeMessage},
	}
	for _, tt := range tests {
		var req httpmsg.Request
		err := decodeRequestHead(block(tt.fields...), &req, 64<<10, nil)
		wantCode(t, tt.name, err, tt.code, false)
	}
	var req httpmsg.Request
	if err := decodeRequestHead(block(with("accept", "*/*", "content-length", "7")...), &req, 64<<10, nil); err != nil {
		t.Fatal(err)
	}
	if req.Method != "GET" || req.Path != "/a" || req.RawQuery != "b=c" || req.RequestURI != "/a?b=c" ||
		req.Host != "example.com" || req.Scheme != "https" || req.Proto != "HTTP/3.0" || req.ProtoMajor != 3 ||
		req.ContentLength != 7 || len(req.Header) != 2 || req.Header[0] != (httpmsg.Field{Name: "accept", Value: "*/*"}) {
		t.Fatalf("request %+v", req)
	}
}

// TestFieldSectionLimits: a section past the limit is errFieldsTooLarge
// (answered 431); a reference to a dynamic table the server never offered is
// QPACK_DECOMPRESSION_FAILED (RFC 9204 §2.2.3, §4.5.1.1).
func TestFieldSectionLimits(t *testing.T) {
	var req httpmsg.Request
	big := with("x", string(bytes.Repeat([]byte{'a'}, 1000)))
	if err := decodeRequestHead(block(big...), &req, 1000, nil); err != errFieldsTooLarge {
		t.Fatalf("over the limit: %v", err)
	}
	for name, b := range map[string][]byte{
		"required insert count 1": {0x01, 0x00, 0xd1},
		"dynamic indexed field":   {0x00, 0x00, 0x80},
		"truncated literal":       {0x00, 0x00, 0x2f},
		"static index past table": {0x00, 0x00, 0xff, 0x70},
	} {
		req = httpmsg.Request{}
		wantCode(t, name, decodeRequestHead(b, &req, 64<<10, nil), ErrCodeQPACKDecompressionFailed, true)
	}
}

// TestDecodeTrailers: RFC 9114 §4.3, no pseudo-header fields in trailers.
func TestDecodeTrailers(t *testing.T) {
	var req httpmsg.Request
	wantCode(t, "valid", decodeTrailers(block("x-sum", "1"), &req, 1<<10, nil), 0, false)
	if len(req.Trailer) != 1 || req.Trailer[0].Name != "x-sum" {
		t.Fatalf("trailer %v", req.Trailer)
	}
	wantCode(t, "pseudo", decodeTrailers(block(":path", "/"), &req, 1<<10, nil), ErrCodeMessage, false)
	wantCode(t, "connection", decodeTrailers(block("connection", "x"), &req, 1<<10, nil), ErrCodeMessage, false)
	wantCode(t, "upper case", decodeTrailers(block("X-Sum", "1"), &req, 1<<10, nil), ErrCodeMessage, false)
}

// TestRequestFrameRule: RFC 9114 §4.1 and §7 on a request stream.
func TestRequestFrameRule(t *testing.T) {
	tests := []struct {
		name                    string
		typ                     uint64
		sawHeaders, sawTrailers bool
		skip                    bool
		code                    ErrCode
	}{
		{name: "HEADERS first", typ: frameHeaders},
		{name: "DATA after HEADERS", typ: frameData, sawHeaders: true},
		{name: "trailers", typ: frameHeaders, sawHeaders: true},
		{name: "DATA before HEADERS", typ: frameData, code: ErrCodeFrameUnexpected},
		{name: "DATA after trailers", typ: frameData, sawHeaders: true, sawTrailers: true, code: ErrCodeFrameUnexpected},
		{name: "HEADERS after trailers", typ: frameHeaders, sawHeaders: true, sawTrailers: true, code: ErrCodeFrameUnexpected},
		{name: "SETTINGS", typ: frameSettings, code: ErrCodeFrameUnexpected},
		{name: "GOAWAY", typ: frameGoAway, sawHeaders: true, code: ErrCodeFrameUnexpected},
		{name: "MAX_PUSH_ID", typ: frameMaxPushID, code: ErrCodeFrameUnexpected},
		{name: "CANCEL_PUSH", typ: frameCancelPush, code: ErrCodeFrameUnexpected},
		{name: "PUSH_PROMISE from a client", typ: framePushPromise, code: ErrCodeFrameUnexpected},
		{name: "HTTP/2 PRIORITY", typ: 0x02, code: ErrCodeFrameUnexpected},
		{name: "HTTP/2 PING", typ: 0x06, code: ErrCodeFrameUnexpected},
		{name: "HTTP/2 WINDOW_UPDATE", typ: 0x08, code: ErrCodeFrameUnexpected},
		{name: "HTTP/2 CONTINUATION", typ: 0x09, code: ErrCodeFrameUnexpected},
		{name: "reserved 0x21", typ: 0x21, skip: true},
		{name: "reserved 0x1f*7+0x21", typ: 0x1f*7 + 0x21, skip: true},
		{name: "unknown 0x2f", typ: 0x2f, sawHeaders: true, skip: true},
	}
	for _, tt := range tests {
		skip, err := requestFrameRule(tt.typ, tt.sawHeaders, tt.sawTrailers)
		wantCode(t, tt.name, err, tt.code, true)
		if skip != tt.skip {
			t.Errorf("%s: skip %v", tt.name, skip)
		}
	}
}

// TestControlParser: RFC 9114 §6.2.1 and §7.2 on the client's control stream.
func TestControlParser(t *testing.T) {
	settings := frameBytes(frameSettings, varints(settingMaxFieldSectionSize, 1000, 0x21, 7))
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name string
		in   []byte
		code ErrCode
	}{
		{name: "SETTINGS", in: settings},
		{name: "empty SETTINGS", in: frameBytes(frameSettings, nil)},
		{name: "SETTINGS then GOAWAY and reserved", in: cat(settings, frameBytes(frameGoAway, varints(8)), frameBytes(0x21, []byte("grease")))},
		{name: "SETTINGS then MAX_PUSH_ID twice", in: cat(settings, frameBytes(frameMaxPushID, varints(3)), frameBytes(frameMaxPushID, varints(5)))},
		{name: "first frame not SETTINGS", in: frameBytes(frameGoAway, varints(0)), code: ErrCodeMissingSettings},
		{name: "reserved frame first", in: frameBytes(0x21, nil), code: ErrCodeMissingSettings},
		{name: "second SETTINGS", in: cat(settings, settings), code: ErrCodeFrameUnexpected},
		{name: "DATA", in: cat(settings, frameBytes(frameData, []byte("x"))), code: ErrCodeFrameUnexpected},
		{name: "HEADERS", in: cat(settings, frameBytes(frameHeaders, block(get...))), code: ErrCodeFrameUnexpected},
		{name: "PUSH_PROMISE", in: cat(settings, frameBytes(framePushPromise, varints(0))), code: ErrCodeFrameUnexpected},
		{name: "HTTP/2 frame type", in: cat(settings, frameBytes(0x06, make([]byte, 8))), code: ErrCodeFrameUnexpected},
		{name: "HTTP/2 setting", in: frameBytes(frameSettings, varints(0x04, 100)), code: ErrCodeSettings},
		{name: "duplicate setting", in: frameBytes(frameSettings, varints(settingMaxFieldSectionSize, 1, settingMaxFieldSectionSize, 2)), code: ErrCodeSettings},
		{name: "enable connect protocol 2", in: frameBytes(frameSettings, varints(settingEnableConnectProtocol, 2)), code: ErrCodeSettings},
		{name: "truncated setting", in: frameBytes(frameSettings, varints(settingMaxFieldSectionSize)), code: ErrCodeFrame},
		{name: "GOAWAY with extra bytes", in: cat(settings, frameBytes(frameGoAway, varints(4, 4))), code: ErrCodeFrame},
		{name: "GOAWAY increased", in: cat(settings, frameBytes(frameGoAway, varints(4)), frameBytes(frameGoAway, varints(8))), code: ErrCodeID},
		{name: "MAX_PUSH_ID reduced", in: cat(settings, frameBytes(frameMaxPushID, varints(5)), frameBytes(frameMaxPushID, varints(3))), code: ErrCodeID},
		{name: "CANCEL_PUSH never promised", in: cat(settings, frameBytes(frameCancelPush, varints(0))), code: ErrCodeID},
		{name: "oversized SETTINGS", in: append(appendFrameHeader(nil, frameSettings, maxControlFrame+1), make([]byte, 10)...), code: ErrCodeExcessiveLoad},
	}
	for _, tt := range tests {
		// Whole, and byte by byte: the parser is incremental.
		var p controlParser
		_, err := p.feed(tt.in)
		wantCode(t, tt.name, err, tt.code, true)
		var q controlParser
		var buf []byte
		err = nil
		for _, b := range tt.in {
			buf = append(buf, b)
			var used int
			used, err = q.feed(buf)
			buf = buf[used:]
			if err != nil {
				break
			}
		}
		wantCode(t, tt.name+" (bytewise)", err, tt.code, true)
	}
	var p controlParser
	if _, err := p.feed(settings); err != nil || p.settings.maxFieldSectionSize != 1000 {
		t.Fatalf("settings %+v: %v", p.settings, err)
	}
}

// TestUniStreamRule: RFC 9114 §6.2 and RFC 9204 §4.2, stream types.
func TestUniStreamRule(t *testing.T) {
	tests := []struct {
		name     string
		types    []uint64 // opened in order; the last one is judged
		critical bool
		ignore   bool
		code     ErrCode
	}{
		{name: "control", types: []uint64{streamTypeControl}, critical: true},
		{name: "encoder and decoder", types: []uint64{streamTypeQPACKEncoder, streamTypeQPACKDecoder}, critical: true},
		{name: "second control", types: []uint64{streamTypeControl, streamTypeControl}, code: ErrCodeStreamCreation},
		{name: "second encoder", types: []uint64{streamTypeQPACKEncoder, streamTypeQPACKEncoder}, code: ErrCodeStreamCreation},
		{name: "second decoder", types: []uint64{streamTypeQPACKDecoder, streamTypeQPACKDecoder}, code: ErrCodeStreamCreation},
		{name: "push from a client", types: []uint64{streamTypePush}, code: ErrCodeStreamCreation},
		{name: "reserved", types: []uint64{0x21}, ignore: true},
		{name: "unknown", types: []uint64{0x54}, ignore: true},
	}
	for _, tt := range tests {
		var seen [4]bool
		var critical, ignore bool
		var err error
		for _, typ := range tt.types {
			critical, ignore, err = uniStreamRule(typ, &seen)
		}
		wantCode(t, tt.name, err, tt.code, true)
		if err == nil && (critical != tt.critical || ignore != tt.ignore) {
			t.Errorf("%s: critical %v ignore %v", tt.name, critical, ignore)
		}
	}
}

// TestQPACKStreams: RFC 9204 §4.3 and §4.4 with a zero-capacity table.
func TestQPACKStreams(t *testing.T) {
	enc := []struct {
		name string
		in   []byte
		code ErrCode
	}{
		{name: "capacity 0", in: []byte{0x20}},
		{name: "capacity 0 twice", in: []byte{0x20, 0x20}},
		{name: "capacity 10", in: []byte{0x2a}, code: ErrCodeQPACKEncoderStream},
		{name: "capacity 4096", in: []byte{0x3f, 0xe1, 0x1f}, code: ErrCodeQPACKEncoderStream},
		{name: "insert with name reference", in: []byte{0xc0, 0x01, 'a'}, code: ErrCodeQPACKEncoderStream},
		{name: "insert with literal name", in: []byte{0x41, 'a', 0x01, 'b'}, code: ErrCodeQPACKEncoderStream},
		{name: "duplicate", in: []byte{0x00}, code: ErrCodeQPACKEncoderStream},
	}
	for _, tt := range enc {
		_, err := encoderStreamParser{}.feed(tt.in)
		wantCode(t, "encoder: "+tt.name, err, tt.code, true)
	}
	if used, err := (encoderStreamParser{}).feed([]byte{0x3f}); used != 0 || err != nil {
		t.Errorf("encoder: partial integer: used %d, %v", used, err)
	}
	dec := []struct {
		name string
		in   []byte
		code ErrCode
	}{
		{name: "stream cancellation", in: []byte{0x44, 0x48}},
		{name: "section acknowledgment", in: []byte{0x84}, code: ErrCodeQPACKDecoderStream},
		{name: "insert count increment", in: []byte{0x01}, code: ErrCodeQPACKDecoderStream},
		{name: "insert count increment 0", in: []byte{0x00}, code: ErrCodeQPACKDecoderStream},
	}
	for _, tt := range dec {
		_, err := decoderStreamParser{}.feed(tt.in)
		wantCode(t, "decoder: "+tt.name, err, tt.code, true)
	}
}

// TestFrameHeader: parse and append round trip; a partial header needs more.
func TestFrameHeader(t *testing.T) {
	for _, tc := range []struct{ typ, length uint64 }{{0, 0}, {1, 63}, {0x21, 64}, {0x1f*1000 + 0x21, 1 << 30}, {7, 1<<62 - 1}} {
		b := appendFrameHeader(nil, tc.typ, tc.length)
		typ, length, n := parseFrameHeader(b)
		if typ != tc.typ || length != tc.length || n != len(b) {
			t.Fatalf("%v: got %d %d %d", tc, typ, length, n)
		}
		for i := 0; i < len(b); i++ {
			if _, _, n := parseFrameHeader(b[:i]); n != 0 {
				t.Fatalf("%v: %d of %d bytes parsed", tc, i, len(b))
			}
		}
	}
	if !isReservedType(0x21) || !isReservedType(0x40) || isReservedType(0x22) || isReservedType(0x20) {
		t.Fatal("isReservedType")
	}
	if _, err := parseVarint(varints(1, 2)); err == nil {
		t.Fatal("parseVarint: extra bytes accepted")
	}
}

// TestAppendHeaders: response fields go out in lower case without the fields
// the writer owns or RFC 9114 §4.2 forbids; trailers without forbidden names.
func TestAppendHeaders(t *testing.T) {
	var e fieldEncoder
	out := e.appendHeaders(nil, 200, []httpmsg.Field{
		{Name: "X-Custom", Value: "v"}, {Name: "Connection", Value: "close"}, {Name: "Content-Length", Value: "9"},
		{Name: "Transfer-Encoding", Value: "chunked"}, {Name: "Bad Name", Value: "x"}, {Name: "x-split", Value: "a\r\nb"},
	}, false, 5)
	typ, length, n := parseFrameHeader(out)
	if typ != frameHeaders || int(length) != len(out)-n {
		t.Fatalf("frame %d %d", typ, length)
	}
	var got []string
	err := decodeFields(out[n:], 1<<20, nil, func(name, value string) error {
		got = append(got, name+"="+value)
		return nil
	})
	want := []string{":status=200", "x-custom=v", "content-length=5"}
	if err != nil || len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("got %v: %v", got, err)
	}
	out = e.appendHeaders(nil, 0, []httpmsg.Field{{Name: "X-Sum", Value: "1"}, {Name: "Content-Type", Value: "x"}}, false, -1)
	_, _, n = parseFrameHeader(out)
	got = got[:0]
	if err := decodeFields(out[n:], 1<<20, nil, func(name, value string) error {
		got = append(got, name+"="+value)
		return nil
	}); err != nil || len(got) != 1 || got[0] != "x-sum=1" {
		t.Fatalf("trailers %v: %v", got, err)
	}
}

func TestErrCodeString(t *testing.T) {
	if ErrCodeMessage.String() != "H3_MESSAGE_ERROR" || ErrCode(0x999).String() != "H3_ERROR_0x999" {
		t.Fatal(ErrCodeMessage.String())
	}
	if !errors.Is(errTruncated, errTruncated) {
		t.Fatal()
	}
}

// TestStaticStatus: staticStatus agrees with the static table (RFC 9204
// Appendix A) for every status code.
func TestStaticStatus(t *testing.T) {
	for code := 100; code < 600; code++ {
		want := -1
		for i, e := range qpackStatic {
			if e.name == ":status" && e.value == strconv.Itoa(code) {
				want = i
			}
		}
		if got := staticStatus(code); got != want {
			t.Errorf("staticStatus(%d) = %d, want %d", code, got, want)
		}
	}
}

// TestAppendHeadersQPACK: github.com/quic-go/qpack's decoder reads the
// server's sections as the server meant them: static :status indexes and
// literal ones, static name references, literal names, long names and values
// (multi-byte prefixed integers), empty values.
func TestAppendHeadersQPACK(t *testing.T) {
	long := strings.Repeat("v", 300)
	for _, status := range []int{200, 404, 500, 418, 299, 0} {
		var e fieldEncoder
		header := []httpmsg.Field{
			{Name: "Content-Type", Value: "text/plain; charset=utf-8"}, {Name: "x-custom", Value: ""},
			{Name: "x-" + strings.Repeat("n", 40), Value: long}, {Name: "server", Value: "celeris"},
			{Name: "set-cookie", Value: "a=b"}, {Name: "access-control-allow-origin", Value: "*"},
		}
		out := e.appendHeaders(nil, status, header, status != 0, 12345)
		_, length, n := parseFrameHeader(out)
		if int(length) != len(out)-n {
			t.Fatalf("%d: frame length %d of %d", status, length, len(out)-n)
		}
		var got []string
		next := qpack.NewDecoder().Decode(out[n:])
		for {
			hf, err := next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%d: %v", status, err)
			}
			if hf.Name != "date" {
				got = append(got, hf.Name+"="+hf.Value)
			}
		}
		want := []string{"content-type=text/plain; charset=utf-8", "x-custom=", "x-" + strings.Repeat("n", 40) + "=" + long,
			"server=celeris", "set-cookie=a=b", "access-control-allow-origin=*", "content-length=12345"}
		if status > 0 {
			want = append([]string{":status=" + strconv.Itoa(status)}, want...)
		} else {
			want = slices.DeleteFunc(want, func(s string) bool { return strings.HasPrefix(s, "content-") || strings.HasPrefix(s, "set-cookie") })
			want = append(want, "content-length=12345")
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%d:\n got %q\nwant %q", status, got, want)
		}
	}
}
