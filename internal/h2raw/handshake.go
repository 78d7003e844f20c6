package h2raw

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Open dials addr for a prior-knowledge h2c connection, sends the preface and an
// empty SETTINGS, reads the server's first SETTINGS and acknowledges it. It
// returns the connection (deadline 10 s from now; the caller closes it), a Framer
// over it, and the server's settings by ID.
func Open(addr string) (net.Conn, *http2.Framer, map[http2.SettingID]uint32, error) {
	return OpenWith(addr)
}

// OpenWith is Open with the client's settings (an initial window of 0, say).
func OpenWith(addr string, settings ...http2.Setting) (net.Conn, *http2.Framer, map[http2.SettingID]uint32, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, nil, nil, err
	}
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	fr := http2.NewFramer(nc, bufio.NewReader(nc))
	server, err := handshake(nc, fr, settings)
	if err != nil {
		nc.Close()
		return nil, nil, nil, err
	}
	return nc, fr, server, nil
}

func handshake(nc net.Conn, fr *http2.Framer, client []http2.Setting) (map[http2.SettingID]uint32, error) {
	if _, err := io.WriteString(nc, http2.ClientPreface); err != nil {
		return nil, err
	}
	if err := fr.WriteSettings(client...); err != nil {
		return nil, err
	}
	f, err := fr.ReadFrame()
	if err != nil {
		return nil, err
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		return nil, fmt.Errorf("h2raw: the server's first frame is %v, not its SETTINGS", f.Header())
	}
	settings := map[http2.SettingID]uint32{}
	_ = sf.ForeachSetting(func(s http2.Setting) error {
		settings[s.ID] = s.Val
		return nil
	})
	return settings, fr.WriteSettingsAck()
}

// WriteRequest writes a request's HEADERS on stream id: the pseudo-header fields
// of method, authority and path over http, then extra; endStream when no body
// follows.
func WriteRequest(fr *http2.Framer, id uint32, method, authority, path string, endStream bool, extra ...hpack.HeaderField) error {
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range append([]hpack.HeaderField{
		{Name: ":method", Value: method}, {Name: ":scheme", Value: "http"},
		{Name: ":authority", Value: authority}, {Name: ":path", Value: path},
	}, extra...) {
		_ = enc.WriteField(f)
	}
	return fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndStream: endStream, EndHeaders: true})
}
