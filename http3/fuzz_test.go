package celerish3

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris/httpfield"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/quic-go/qpack"
)

// FuzzControlStream feeds arbitrary bytes to the control, encoder and decoder
// stream parsers, whole and split at every fuzzed point: they never panic,
// never consume more than they are given, and fail only with an HTTP/3
// connection error.
func FuzzControlStream(f *testing.F) {
	f.Add(frameBytes(frameSettings, varints(settingMaxFieldSectionSize, 100)), 3)
	f.Add(append(frameBytes(frameSettings, nil), frameBytes(frameGoAway, varints(4))...), 1)
	f.Add(append(frameBytes(frameSettings, nil), frameBytes(0x21, []byte("xx"))...), 5)
	f.Add([]byte{0x20, 0x3f, 0xe1, 0x1f}, 2)
	f.Fuzz(func(t *testing.T, in []byte, split int) {
		parsers := []func([]byte) (int, error){
			new(controlParser).feed, encoderStreamParser{}.feed, decoderStreamParser{}.feed,
		}
		for _, feed := range parsers {
			buf := append([]byte(nil), in[:max(0, min(split, len(in)))]...)
			rest := in[len(buf):]
			for {
				used, err := feed(buf)
				if used < 0 || used > len(buf) {
					t.Fatalf("used %d of %d", used, len(buf))
				}
				if err != nil {
					if _, conn, ok := codeOf(err); !ok || !conn {
						t.Fatalf("not a connection error: %v", err)
					}
					break
				}
				buf = buf[used:]
				if len(rest) == 0 {
					break
				}
				buf = append(buf, rest...)
				rest = nil
			}
		}
	})
}

// FuzzRequestFrames parses arbitrary bytes as a request stream's frame
// sequence: frame headers and the request-stream rule, as reqStream does.
func FuzzRequestFrames(f *testing.F) {
	f.Add(append(getHeadersFrame(), frameBytes(frameData, []byte("abc"))...))
	f.Add(frameBytes(frameData, []byte("x")))
	f.Add(append(frameBytes(0x21, nil), getHeadersFrame()...))
	f.Fuzz(func(t *testing.T, in []byte) {
		sawHeaders, sawTrailers := false, false
		for len(in) > 0 {
			typ, length, n := parseFrameHeader(in)
			if n == 0 {
				return
			}
			in = in[n:]
			skip, err := requestFrameRule(typ, sawHeaders, sawTrailers)
			if err != nil {
				if _, conn, ok := codeOf(err); !ok || !conn {
					t.Fatalf("not a connection error: %v", err)
				}
				return
			}
			if length > uint64(len(in)) {
				return
			}
			payload := in[:length]
			in = in[length:]
			if skip || typ != frameHeaders {
				continue
			}
			var req httpmsg.Request
			if !sawHeaders {
				sawHeaders = true
				_ = decodeRequestHead(payload, &req, 1<<16, nil)
			} else {
				sawTrailers = true
				_ = decodeTrailers(payload, &req, 1<<16, nil)
			}
		}
	})
}

func getHeadersFrame() []byte {
	return frameBytes(frameHeaders, block(":method", "GET", ":scheme", "https", ":path", "/", ":authority", "a"))
}

// FuzzDecodeRequestHead decodes arbitrary field sections: it never panics; a
// section it accepts has the pseudo-header fields a request needs, and no
// field it stored breaks RFC 9114 §4.2.
func FuzzDecodeRequestHead(f *testing.F) {
	f.Add(block(":method", "GET", ":scheme", "https", ":path", "/a?b", ":authority", "x", "accept", "*/*"))
	f.Add(block(":method", "CONNECT", ":authority", "x:1"))
	f.Add(block(":method", "GET", "Upper", "x"))
	f.Add([]byte{0x00, 0x00, 0xd1, 0xd7, 0x50, 0x01, 'a', 0xc1})
	f.Add([]byte{0x01, 0x00, 0x80})
	f.Fuzz(func(t *testing.T, in []byte) {
		var req httpmsg.Request
		err := decodeRequestHead(in, &req, 4096, nil)
		if err != nil {
			if _, _, ok := codeOf(err); !ok {
				t.Fatalf("not an HTTP/3 error: %v", err)
			}
			return
		}
		if req.Method == "" || (req.Method != "CONNECT" && (req.Path == "" || req.Scheme == "")) {
			t.Fatalf("accepted %+v", req)
		}
		for _, fl := range req.Header {
			if httpfield.CheckRequestField(fl.Name, fl.Value) != "" || fl.Name[0] == ':' || httpfield.ConnectionSpecific(fl.Name) {
				t.Fatalf("stored field %q: %q", fl.Name, fl.Value)
			}
		}
	})
}

// FuzzDecodeSection: the server's QPACK decoder (static table and literals,
// decodeSection) agrees with github.com/quic-go/qpack's on every input: the
// same fields, in order, and an error exactly where qpack's has one.
func FuzzDecodeSection(f *testing.F) {
	f.Add(block(":method", "GET", ":scheme", "https", ":path", "/x?y", ":authority", "a.example", "user-agent", "Go", "x-custom", "value"))
	f.Add(block("accept", "*/*", "cookie", strings.Repeat("k=v; ", 20)))
	f.Add([]byte{0x00, 0x00, 0xd1, 0xff, 0x23})                   // static indexes, one past the table
	f.Add([]byte{0x00, 0x00, 0x5f, 0x1d, 0x83, 0x9b, 0xd9, 0xab}) // name reference, Huffman value
	f.Add([]byte{0x00, 0x00, 0x2b, 0x61, 0x61, 0x61, 0x01, 0x62}) // literal name
	f.Add([]byte{0x00, 0x80, 0x80})                               // base sign bit, dynamic index
	f.Add([]byte{0x01, 0x00})
	f.Add([]byte{0x00, 0x00, 0x10})
	f.Fuzz(func(t *testing.T, in []byte) {
		type field struct{ name, value string }
		var ours, theirs []field
		var arena fieldArena
		err := decodeSection(in, &arena, func(name, value string) error {
			ours = append(ours, field{name: strings.Clone(name), value: strings.Clone(value)})
			return nil
		})
		if err != nil {
			wantCode(t, "decodeSection", err, ErrCodeQPACKDecompressionFailed, true)
		}
		next := qpack.NewDecoder().Decode(in)
		var qerr error
		for {
			hf, e := next()
			if e == io.EOF {
				break
			}
			if e != nil {
				qerr = e
				break
			}
			theirs = append(theirs, field{name: hf.Name, value: hf.Value})
		}
		if (err != nil) != (qerr != nil) || !slices.Equal(ours, theirs) {
			t.Fatalf("%x: ours %q %v, qpack's %q %v", in, ours, err, theirs, qerr)
		}
	})
}
