package enginetest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"golang.org/x/net/websocket"
)

// testH2CUpgrade: an HTTP/1.1 request with Upgrade: h2c gets 101, then its
// answer on stream 1 in HTTP/2, and the connection goes on in HTTP/2.
func testH2CUpgrade(t *testing.T, s *server) {
	c := s.dial(t)
	req := "GET /echo/up HTTP/1.1\r\nHost: enginetest\r\nConnection: Upgrade, HTTP2-Settings\r\n" +
		"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n"
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("upgrade answer: %v, %v", resp, err)
	}
	if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(c, br)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	var status string
	dec := hpack.NewDecoder(4096, func(f hpack.HeaderField) {
		if f.Name == ":status" {
			status = f.Value
		}
	})
	if got := h2Response(t, fr, dec, &status, 1); got != "200 /echo/up" {
		t.Fatalf("stream 1 (the upgraded request): %q", got)
	}
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", "enginetest"}, {":path", "/inline/3"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: hb.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	if got := h2Response(t, fr, dec, &status, 3); got != "200 /inline/3" {
		t.Fatalf("stream 3: %q", got)
	}
}

// h2Response reads frames until stream id ends and returns "status body";
// dec is the connection's HPACK decoder, which stores :status in *status.
func h2Response(t *testing.T, fr *http2.Framer, dec *hpack.Decoder, status *string, id uint32) string {
	t.Helper()
	body := ""
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading stream %d: %v", id, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.GoAwayFrame:
			t.Fatalf("GOAWAY %v while reading stream %d", f.ErrCode, id)
		case *http2.HeadersFrame:
			if f.StreamID == id {
				if _, err := dec.Write(f.HeaderBlockFragment()); err != nil {
					t.Fatal(err)
				}
				if f.StreamEnded() {
					return *status + " " + body
				}
			}
		case *http2.DataFrame:
			if f.StreamID == id {
				body += string(f.Data())
				if f.StreamEnded() {
					return *status + " " + body
				}
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				t.Fatalf("stream %d reset: %v", id, f.ErrCode)
			}
		}
	}
}

// testH2PriorKnowledge: x/net's HTTP/2 client with prior knowledge, 32
// concurrent streams on one connection, inline and worker routes.
func testH2PriorKnowledge(t *testing.T, s *server) {
	tr := &http2.Transport{
		AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	errs := make(chan string, 32)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/echo/" + strconv.Itoa(i)
			if i%2 == 0 {
				path = "/inline/" + strconv.Itoa(i)
			}
			resp, err := cl.Get("http://" + s.addr + path)
			if err != nil {
				errs <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(b) != path || resp.ProtoMajor != 2 {
				errs <- resp.Proto + " " + resp.Status + " " + string(b)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// testWebSocket: a handler switches the connection to WebSocket (101, then
// internal/ws on the same engine connection); x/net's client exchanges
// messages with it.
func testWebSocket(t *testing.T, s *server) {
	cfg, err := websocket.NewConfig("ws://"+s.addr+"/ws", "http://enginetest/")
	if err != nil {
		t.Fatal(err)
	}
	c, err := websocket.DialConfig(cfg)
	if err != nil {
		t.Fatalf("WebSocket handshake: %v", err)
	}
	defer c.Close()
	for _, msg := range []string{"hello", string(bytes.Repeat([]byte("x"), 200<<10))} {
		if err := websocket.Message.Send(c, msg); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := websocket.Message.Receive(c, &got); err != nil {
			t.Fatal(err)
		}
		if got != msg {
			t.Fatalf("echo of a %d-byte message: %d bytes", len(msg), len(got))
		}
	}
}
