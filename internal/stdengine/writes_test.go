package stdengine

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// countListener counts the Write calls on the connections it accepts (which,
// having no file descriptor, are written by the writer goroutine only).
type countListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *countListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countConn{Conn: c, writes: &l.writes}, nil
}

type countConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// holdConn collects what is written to it while hold is set, and sends it in one
// write when released: several TLS records in one TCP segment.
type holdConn struct {
	net.Conn
	hold bool
	buf  bytes.Buffer
}

func (c *holdConn) Write(b []byte) (int, error) {
	if c.hold {
		return c.buf.Write(b)
	}
	return c.Conn.Write(b)
}

func (c *holdConn) release() error {
	c.hold = false
	_, err := c.Conn.Write(c.buf.Bytes())
	return err
}

// Over TLS a batch reaches the socket as one write however many records it
// makes (crypto/tls writes each record on its own), and the answers to records
// that arrived together (one read) share one write; the bytes are those written,
// in order.
func TestTLSBatchOneWrite(t *testing.T) {
	for _, tc := range []struct {
		name     string
		requests string // one TLS record each, sent in one TCP write
		answer   int    // bytes answered per request byte
	}{
		{"one batch, many records", "a", 40 << 10},
		{"three records, one read", "abc", 100},
		{"eight records, one read", "abcdefgh", 3000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			cl := &countListener{Listener: ln}
			var mu sync.Mutex
			var atStart int64 = -1 // writes when the protocol began (after the handshake)
			addr := start(t, Config{Listener: cl, TLSConfig: &tls.Config{Certificates: []tls.Certificate{testCert().TLS}}},
				func(c httpmsg.Conn) *proto {
					mu.Lock()
					atStart = cl.writes.Load()
					mu.Unlock()
					return &proto{c: c, closed: make(chan error, 1), data: func(p *proto, in []byte) (int, error) {
						for _, b := range in {
							p.c.Write(bytes.Repeat([]byte{b - 'a' + 'A'}, tc.answer))
						}
						return len(in), nil
					}}
				})
			raw, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			hc := &holdConn{Conn: raw}
			c := tls.Client(hc, &tls.Config{RootCAs: testCert().Pool(), ServerName: "127.0.0.1"})
			if err := c.Handshake(); err != nil {
				t.Fatal(err)
			}
			hc.hold = true
			for i := range len(tc.requests) {
				if _, err := c.Write([]byte(tc.requests[i : i+1])); err != nil {
					t.Fatal(err)
				}
			}
			if err := hc.release(); err != nil {
				t.Fatal(err)
			}
			var want []byte
			for _, b := range []byte(tc.requests) {
				want = append(want, bytes.Repeat([]byte{b - 'a' + 'A'}, tc.answer)...)
			}
			got := make([]byte, len(want))
			if _, err := io.ReadFull(c, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatal("the answers are not the bytes written, in order")
			}
			mu.Lock()
			n := cl.writes.Load() - atStart
			mu.Unlock()
			if atStart < 0 || n != 1 {
				t.Fatalf("%d writes for the answers, want 1", n)
			}
		})
	}
}
