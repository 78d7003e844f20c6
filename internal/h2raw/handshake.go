package h2raw

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"time"

	"golang.org/x/net/http2"
)

// Open dials addr for a prior-knowledge h2c connection, sends the preface and an
// empty SETTINGS, reads the server's first SETTINGS and acknowledges it. It
// returns the connection (deadline 10 s from now; the caller closes it), a Framer
// over it, and the server's settings by ID.
func Open(addr string) (net.Conn, *http2.Framer, map[http2.SettingID]uint32, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, nil, nil, err
	}
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	fr := http2.NewFramer(nc, bufio.NewReader(nc))
	settings, err := handshake(nc, fr)
	if err != nil {
		nc.Close()
		return nil, nil, nil, err
	}
	return nc, fr, settings, nil
}

func handshake(nc net.Conn, fr *http2.Framer) (map[http2.SettingID]uint32, error) {
	if _, err := io.WriteString(nc, http2.ClientPreface); err != nil {
		return nil, err
	}
	if err := fr.WriteSettings(); err != nil {
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
