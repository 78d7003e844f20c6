package celerish3

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"
)

// waitCancelled receives the query of a /wait request whose context ended.
var waitCancelled = make(chan string, 16)

// wireServer starts a celeris server with HTTP/3 and returns its UDP address.
func wireServer(t *testing.T, cfg Config) string {
	t.Helper()
	addr, _ := wireServerH(t, cfg)
	return addr
}

// wireServerH is wireServer that returns the HTTP/3 server too.
func wireServerH(t *testing.T, cfg Config) (string, *Server) {
	t.Helper()
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s := celeris.New(celeris.Config{
		Addr: "127.0.0.1:0", TLSAddr: "127.0.0.1:0", Engine: celeris.EngineStd,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}},
	})
	s.GET("/", func(c *celeris.Context) error { return c.String(200, "ok") })
	s.POST("/read", func(c *celeris.Context) error {
		b, err := c.Body()
		if err != nil {
			return err
		}
		return c.String(200, string(b))
	})
	s.Any("/wait", func(c *celeris.Context) error {
		ms, _ := strconv.Atoi(c.Query("ms"))
		select {
		case <-c.Context().Done():
			waitCancelled <- c.RawQuery()
			return c.Context().Err()
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return c.String(200, "waited")
		}
	})
	s.GET("/stream", func(c *celeris.Context) error {
		w, err := c.Stream(200, "text/plain")
		if err != nil {
			return err
		}
		for {
			select {
			case <-c.Context().Done():
				waitCancelled <- "stream"
				return c.Context().Err()
			case <-time.After(10 * time.Millisecond):
			}
			_, err := w.Write([]byte("tick\n"))
			if err == nil {
				err = w.Flush()
			}
			if err != nil {
				// A write can fail an instant before the context ends.
				select {
				case <-c.Context().Done():
					waitCancelled <- "stream"
				case <-time.After(time.Second):
				}
				return err
			}
		}
	})
	h := Enable(s, cfg)
	celeristest.Start(t, s)
	addr, err := h.WaitReady()
	if err != nil {
		t.Fatal(err)
	}
	return addr.String(), h
}

// rawClient is a QUIC connection that speaks HTTP/3 by hand.
type rawClient struct {
	t  *testing.T
	qc *quic.Conn
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	qc, err := quic.DialAddr(ctx, addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}}, &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = qc.CloseWithError(0, "") })
	return &rawClient{t: t, qc: qc}
}

// uni opens a unidirectional stream and writes b on it.
func (c *rawClient) uni(b []byte) *quic.SendStream {
	s, err := c.qc.OpenUniStream()
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := s.Write(b); err != nil {
		c.t.Fatal(err)
	}
	return s
}

// control opens the client's control stream with an empty SETTINGS frame.
func (c *rawClient) control() *quic.SendStream {
	return c.uni(append([]byte{streamTypeControl}, frameBytes(frameSettings, nil)...))
}

// request sends b on a new request stream, ends it when fin, and returns the
// response bytes, or the stream error that ended it.
func (c *rawClient) request(b []byte, fin bool) ([]byte, error) {
	s, err := c.qc.OpenStreamSync(context.Background())
	if err != nil {
		return nil, err
	}
	if _, err := s.Write(b); err != nil {
		return nil, err
	}
	if fin {
		_ = s.Close()
	}
	_ = s.SetReadDeadline(time.Now().Add(5 * time.Second))
	return io.ReadAll(s)
}

// closedWith waits for the connection to close and returns its application
// error code.
func (c *rawClient) closedWith() ErrCode {
	select {
	case <-c.qc.Context().Done():
	case <-time.After(5 * time.Second):
		c.t.Fatal("the connection did not close")
	}
	var ae *quic.ApplicationError
	if !errors.As(context.Cause(c.qc.Context()), &ae) {
		c.t.Fatalf("closed with %v", context.Cause(c.qc.Context()))
	}
	return ErrCode(ae.ErrorCode)
}

func streamCode(err error) ErrCode {
	var se *quic.StreamError
	if errors.As(err, &se) {
		return ErrCode(se.ErrorCode)
	}
	return 0
}

// status decodes the response's first HEADERS frame and returns its :status.
func status(t *testing.T, resp []byte) string {
	t.Helper()
	typ, length, n := parseFrameHeader(resp)
	if n == 0 || typ != frameHeaders || uint64(len(resp)-n) < length {
		t.Fatalf("response %q", resp)
	}
	st := ""
	_ = decodeFields(resp[n:n+int(length)], 1<<20, nil, func(name, value string) error {
		if name == ":status" {
			st = value
		}
		return nil
	})
	return st
}

var getHeaders = frameBytes(frameHeaders, block(":method", "GET", ":scheme", "https", ":path", "/", ":authority", "localhost"))

// TestWireServerSettings: the server opens its control stream with SETTINGS
// first (RFC 9114 §6.2.1): no QPACK dynamic table, its field section limit,
// and no SETTINGS_ENABLE_CONNECT_PROTOCOL, since the server has no tunnel
// route (TransportEnv.ExtendedConnect; TestWebSocketOverHTTP3 has one).
func TestWireServerSettings(t *testing.T) {
	c := dialRaw(t, wireServer(t, Config{MaxFieldSectionSize: 5000}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.qc.AcceptUniStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := io.ReadAtLeast(s, buf, 8)
	if buf[0] != streamTypeControl {
		t.Fatalf("stream type %d", buf[0])
	}
	typ, length, k := parseFrameHeader(buf[1:n])
	if typ != frameSettings || k == 0 {
		t.Fatalf("first frame %d", typ)
	}
	ps, err := parseSettings(buf[1+k : 1+k+int(length)])
	if err != nil || ps.maxFieldSectionSize != 5000 || ps.qpackMaxTable != 0 || ps.qpackBlocked != 0 {
		t.Fatalf("settings %+v: %v", ps, err)
	}
	if _, ok := settingsValues(t, buf[1+k:1+k+int(length)])[settingEnableConnectProtocol]; ok {
		t.Fatal("SETTINGS_ENABLE_CONNECT_PROTOCOL sent by a server without a tunnel route")
	}
}

// settingsValues reads a SETTINGS frame's payload: identifier -> value.
func settingsValues(t *testing.T, p []byte) map[uint64]uint64 {
	t.Helper()
	m := map[uint64]uint64{}
	for len(p) > 0 {
		id, a, err := quicvarint.Parse(p)
		if err != nil {
			t.Fatal(err)
		}
		val, b, err := quicvarint.Parse(p[a:])
		if err != nil {
			t.Fatal(err)
		}
		m[id] = val
		p = p[a+b:]
	}
	return m
}

// TestWireRequestStreamRules: RFC 9114 §4 and §7 over a real connection.
func TestWireRequestStreamRules(t *testing.T) {
	addr := wireServer(t, Config{MaxFieldSectionSize: 2000})
	t.Run("reserved frames ignored", func(t *testing.T) {
		c := dialRaw(t, addr)
		c.control()
		req := append(frameBytes(0x21, []byte("grease")), getHeaders...)
		req = append(req, frameBytes(0x1f*3+0x21, nil)...)
		resp, err := c.request(req, true)
		if err != nil || status(t, resp) != "200" {
			t.Fatalf("%q %v", resp, err)
		}
	})
	t.Run("DATA before HEADERS", func(t *testing.T) {
		c := dialRaw(t, addr)
		_, _ = c.request(frameBytes(frameData, []byte("x")), true)
		if code := c.closedWith(); code != ErrCodeFrameUnexpected {
			t.Fatalf("closed with %v", code)
		}
	})
	t.Run("SETTINGS on a request stream", func(t *testing.T) {
		c := dialRaw(t, addr)
		req := frameBytes(frameHeaders, block(":method", "POST", ":scheme", "https", ":path", "/read", ":authority", "a"))
		_, _ = c.request(append(req, frameBytes(frameSettings, nil)...), true)
		if code := c.closedWith(); code != ErrCodeFrameUnexpected {
			t.Fatalf("closed with %v", code)
		}
	})
	t.Run("truncated frame", func(t *testing.T) {
		c := dialRaw(t, addr)
		_, _ = c.request(getHeaders[:len(getHeaders)-2], true)
		if code := c.closedWith(); code != ErrCodeFrame {
			t.Fatalf("closed with %v", code)
		}
	})
	t.Run("malformed request", func(t *testing.T) {
		c := dialRaw(t, addr)
		_, err := c.request(frameBytes(frameHeaders, block(":method", "GET", ":scheme", "https", ":path", "/", ":authority", "a", "Upper", "x")), true)
		if code := streamCode(err); code != ErrCodeMessage {
			t.Fatalf("got %v", err)
		}
		// Only the stream: the connection serves on.
		if resp, err := c.request(getHeaders, true); err != nil || status(t, resp) != "200" {
			t.Fatalf("%q %v", resp, err)
		}
	})
	t.Run("content-length longer than body", func(t *testing.T) {
		c := dialRaw(t, addr)
		req := frameBytes(frameHeaders, block(":method", "POST", ":scheme", "https", ":path", "/read", ":authority", "a", "content-length", "10"))
		req = append(req, frameBytes(frameData, []byte("abc"))...)
		if _, err := c.request(req, true); streamCode(err) != ErrCodeMessage {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("content-length shorter than body", func(t *testing.T) {
		c := dialRaw(t, addr)
		req := frameBytes(frameHeaders, block(":method", "POST", ":scheme", "https", ":path", "/read", ":authority", "a", "content-length", "2"))
		req = append(req, frameBytes(frameData, []byte("abc"))...)
		if _, err := c.request(req, true); streamCode(err) != ErrCodeMessage {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("content-length without body", func(t *testing.T) {
		c := dialRaw(t, addr)
		req := frameBytes(frameHeaders, block(":method", "POST", ":scheme", "https", ":path", "/read", ":authority", "a", "content-length", "5"))
		if _, err := c.request(req, true); streamCode(err) != ErrCodeMessage {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("body with trailers", func(t *testing.T) {
		c := dialRaw(t, addr)
		req := frameBytes(frameHeaders, block(":method", "POST", ":scheme", "https", ":path", "/read", ":authority", "a"))
		req = append(req, frameBytes(frameData, []byte("ab"))...)
		req = append(req, frameBytes(frameData, nil)...)
		req = append(req, frameBytes(frameData, []byte("c"))...)
		req = append(req, frameBytes(frameHeaders, block("x-t", "1"))...)
		resp, err := c.request(req, true)
		if err != nil || status(t, resp) != "200" {
			t.Fatalf("%q %v", resp, err)
		}
	})
	t.Run("field section too large", func(t *testing.T) {
		c := dialRaw(t, addr)
		big := make([]byte, 3000)
		for i := range big {
			big[i] = 'a'
		}
		resp, err := c.request(frameBytes(frameHeaders, block(":method", "GET", ":scheme", "https", ":path", "/", ":authority", "a", "x-big", string(big))), true)
		if err != nil || status(t, resp) != "431" {
			t.Fatalf("%q %v", resp, err)
		}
	})
	t.Run("stream ends before HEADERS", func(t *testing.T) {
		c := dialRaw(t, addr)
		if _, err := c.request(nil, true); streamCode(err) != ErrCodeRequestIncomplete {
			t.Fatalf("got %v", err)
		}
	})
}

// TestWireUniStreams: RFC 9114 §6.2 over a real connection.
func TestWireUniStreams(t *testing.T) {
	addr := wireServer(t, Config{})
	for _, tt := range []struct {
		name    string
		streams [][]byte
		code    ErrCode
	}{
		{name: "second control stream", streams: [][]byte{
			append([]byte{streamTypeControl}, frameBytes(frameSettings, nil)...),
			append([]byte{streamTypeControl}, frameBytes(frameSettings, nil)...)}, code: ErrCodeStreamCreation},
		{name: "second encoder stream", streams: [][]byte{{streamTypeQPACKEncoder}, {streamTypeQPACKEncoder}}, code: ErrCodeStreamCreation},
		{name: "push stream from a client", streams: [][]byte{{streamTypePush, 0}}, code: ErrCodeStreamCreation},
		{name: "control stream without SETTINGS first", streams: [][]byte{append([]byte{streamTypeControl}, frameBytes(frameGoAway, varints(0))...)}, code: ErrCodeMissingSettings},
		{name: "encoder stream sets a capacity", streams: [][]byte{{streamTypeQPACKEncoder, 0x3f, 0xe1, 0x1f}}, code: ErrCodeQPACKEncoderStream},
		{name: "decoder stream acknowledges a section", streams: [][]byte{{streamTypeQPACKDecoder, 0x84}}, code: ErrCodeQPACKDecoderStream},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			for _, s := range tt.streams {
				c.uni(s)
			}
			if code := c.closedWith(); code != tt.code {
				t.Fatalf("closed with %v, want %v", code, tt.code)
			}
		})
	}
	t.Run("large SETTINGS frame", func(t *testing.T) {
		c := dialRaw(t, addr)
		var settings []byte
		for i := uint64(0); len(settings) < 3000; i++ {
			settings = append(settings, varints(0x1f*(i+1)+0x21, i)...) // reserved settings, ignored
		}
		c.uni(append([]byte{streamTypeControl}, frameBytes(frameSettings, settings)...))
		if resp, err := c.request(getHeaders, true); err != nil || status(t, resp) != "200" {
			t.Fatalf("%q %v", resp, err)
		}
		time.Sleep(50 * time.Millisecond)
		if c.qc.Context().Err() != nil {
			t.Fatalf("closed: %v", context.Cause(c.qc.Context()))
		}
	})
	t.Run("control stream closed", func(t *testing.T) {
		c := dialRaw(t, addr)
		_ = c.control().Close()
		if code := c.closedWith(); code != ErrCodeClosedCriticalStream {
			t.Fatalf("closed with %v", code)
		}
	})
	t.Run("unknown stream type is refused alone", func(t *testing.T) {
		c := dialRaw(t, addr)
		c.control()
		s := c.uni([]byte{0x21, 'x'})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		<-s.Context().Done() // STOP_SENDING from the server
		_ = ctx
		var se *quic.StreamError
		if !errors.As(context.Cause(s.Context()), &se) || ErrCode(se.ErrorCode) != ErrCodeStreamCreation {
			t.Fatalf("stream ended with %v", context.Cause(s.Context()))
		}
		if resp, err := c.request(getHeaders, true); err != nil || status(t, resp) != "200" {
			t.Fatalf("%q %v", resp, err)
		}
	})
}

// TestWireGoAway: Drain sends GOAWAY with the first stream ID the server did
// not accept (RFC 9114 §5.2); a request on a later stream is rejected with
// H3_REQUEST_REJECTED, so the client may retry it elsewhere.
func TestWireGoAway(t *testing.T) {
	addr, h := wireServerH(t, Config{})
	c := dialRaw(t, addr)
	c.control()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ctrl, err := c.qc.AcceptUniStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // streams 0 and 4
		if resp, err := c.request(getHeaders, true); err != nil || status(t, resp) != "200" {
			t.Fatalf("%q %v", resp, err)
		}
	}
	if n := h.Drain(); n != 1 {
		t.Fatalf("Drain: %d open", n)
	}
	var buf []byte
	tmp := make([]byte, 64)
	_ = ctrl.SetReadDeadline(time.Now().Add(5 * time.Second))
	var p controlParser
	typeRead := false
	for !p.sawGoAway {
		n, err := ctrl.Read(tmp)
		if err != nil {
			t.Fatal(err)
		}
		start := 0
		if !typeRead && n > 0 {
			start, typeRead = 1, true // the stream type
		}
		buf = append(buf, tmp[start:n]...)
		used, err := p.feed(buf)
		if err != nil {
			t.Fatal(err)
		}
		buf = buf[used:]
	}
	if p.goAwayID != 8 {
		t.Fatalf("GOAWAY %d, want 8", p.goAwayID)
	}
	if _, err := c.request(getHeaders, true); streamCode(err) != ErrCodeRequestRejected {
		t.Fatalf("after GOAWAY: %v", err)
	}
}
