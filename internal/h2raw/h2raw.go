// Package h2raw is a test helper: one HTTP/2 request over a prior-knowledge h2c
// connection of its own, with header fields Go's client would refuse to send
// (connection-specific fields, a list over the peer's limit).
package h2raw

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Get sends GET path with extra fields to addr and returns the response's
// header fields by name (":status" among them). It gives up after 10 s.
func Get(addr, path string, extra ...hpack.HeaderField) (map[string]string, error) {
	fields, _, err := get(addr, path, false, extra)
	return fields, err
}

// GetBody is Get that also returns the response body: the DATA of stream 1 until
// END_STREAM or RST_STREAM.
func GetBody(addr, path string, extra ...hpack.HeaderField) (map[string]string, []byte, error) {
	return get(addr, path, true, extra)
}

func get(addr, path string, withBody bool, extra []hpack.HeaderField) (map[string]string, []byte, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(nc, http2.ClientPreface); err != nil {
		return nil, nil, err
	}
	fr := http2.NewFramer(nc, nc)
	if err := fr.WriteSettings(); err != nil {
		return nil, nil, err
	}
	if err := WriteRequest(fr, 1, http.MethodGet, addr, path, true, extra...); err != nil {
		return nil, nil, err
	}
	dec := hpack.NewDecoder(4096, nil)
	var fields map[string]string
	var body []byte
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return fields, body, err
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
				return nil, nil, err
			}
			fields = map[string]string{}
			for _, h := range hf {
				fields[h.Name] = h.Value
			}
			if !withBody || f.StreamEnded() {
				return fields, nil, nil
			}
		case *http2.DataFrame:
			if f.StreamID == 1 {
				body = append(body, f.Data()...)
				if f.StreamEnded() {
					return fields, body, nil
				}
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == 1 {
				return fields, body, nil
			}
		case *http2.GoAwayFrame:
			return fields, body, fmt.Errorf("GOAWAY %v", f.ErrCode)
		}
	}
}
