package h2raw

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// StreamFrame is one frame the server sent on the request's stream: HEADERS (with its
// decoded fields, CONTINUATION merged), DATA or RST_STREAM.
type StreamFrame struct {
	Type      string // "HEADERS", "DATA" or "RST_STREAM"
	EndStream bool
	Fields    []hpack.HeaderField
	Data      []byte
}

// Field returns the value of the first field named name, or "".
func (f StreamFrame) Field(name string) string {
	for _, h := range f.Fields {
		if h.Name == name {
			return h.Value
		}
	}
	return ""
}

// Do sends a request (GET without body when body is nil, else method with body in
// one DATA frame) on stream 1 of a new prior-knowledge h2c connection, and returns
// the frames of the response up to END_STREAM or RST_STREAM. It gives up after
// 10 s.
func Do(addr, method, path string, body []byte, extra ...hpack.HeaderField) ([]StreamFrame, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(nc, http2.ClientPreface); err != nil {
		return nil, err
	}
	fr := http2.NewFramer(nc, nc)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := fr.WriteSettings(); err != nil {
		return nil, err
	}
	if err := WriteRequest(fr, 1, method, addr, path, body == nil, extra...); err != nil {
		return nil, err
	}
	if body != nil {
		if err := fr.WriteData(1, true, body); err != nil {
			return nil, err
		}
	}
	var out []StreamFrame
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return out, err
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.MetaHeadersFrame:
			if f.StreamID != 1 {
				continue
			}
			out = append(out, StreamFrame{Type: "HEADERS", EndStream: f.StreamEnded(), Fields: f.Fields})
			if f.StreamEnded() {
				return out, nil
			}
		case *http2.DataFrame:
			if f.StreamID != 1 {
				continue
			}
			out = append(out, StreamFrame{Type: "DATA", EndStream: f.StreamEnded(), Data: bytes.Clone(f.Data())})
			if f.StreamEnded() {
				return out, nil
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == 1 {
				return append(out, StreamFrame{Type: "RST_STREAM"}), nil
			}
		case *http2.GoAwayFrame:
			return out, fmt.Errorf("GOAWAY %v", f.ErrCode)
		}
	}
}
