// Package h2raw is a test helper: one HTTP/2 request over a prior-knowledge h2c
// connection of its own, with header fields Go's client would refuse to send
// (connection-specific fields, a list over the peer's limit).
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

// Get sends GET path with extra fields to addr and returns the response's
// header fields by name (":status" among them). It gives up after 10 s.
func Get(addr, path string, extra ...hpack.HeaderField) (map[string]string, error) {
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
	if err := fr.WriteSettings(); err != nil {
		return nil, err
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range append([]hpack.HeaderField{
		{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "http"},
		{Name: ":authority", Value: addr}, {Name: ":path", Value: path},
	}, extra...) {
		_ = enc.WriteField(f)
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		return nil, err
	}
	dec := hpack.NewDecoder(4096, nil)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return nil, err
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.HeadersFrame:
			if f.StreamID != 1 {
				continue
			}
			hf, err := dec.DecodeFull(f.HeaderBlockFragment())
			if err != nil {
				return nil, err
			}
			fields := map[string]string{}
			for _, h := range hf {
				fields[h.Name] = h.Value
			}
			return fields, nil
		case *http2.GoAwayFrame:
			return nil, fmt.Errorf("GOAWAY %v", f.ErrCode)
		}
	}
}
