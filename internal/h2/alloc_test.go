//go:build !race

package h2

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"

	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// discardConn is an httpmsg.Conn that counts what is written; Wake signals wake.
type discardConn struct {
	n    int
	wake chan struct{}
}

func (d *discardConn) Write(b []byte) { d.n += len(b) }
func (d *discardConn) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}
func (d *discardConn) Close()               {}
func (d *discardConn) RemoteAddr() net.Addr { return &net.TCPAddr{} }

var (
	benchBody   = []byte("Hello, World!")
	benchHeader = []httpmsg.Field{{Name: "Content-Type", Value: "text/plain; charset=utf-8"}}
)

type inlineHello struct{}

type workerHello struct{}

func (workerHello) Prepare(*httpmsg.Request) bool { return false }
func (workerHello) Serve(r *httpmsg.Request, w httpmsg.ResponseWriter) {
	_ = w.WriteResponse(200, benchHeader, benchBody)
}

func (inlineHello) Prepare(*httpmsg.Request) bool { return true }
func (inlineHello) Serve(r *httpmsg.Request, w httpmsg.ResponseWriter) {
	_ = w.WriteResponse(200, benchHeader, benchBody)
}

// warmConn returns a Conn past its handshake and a HEADERS frame of a GET whose
// fields are all in the decoder's dynamic table, as a browser's or a load
// generator's repeated requests are.
func warmConn(tb testing.TB, h httpmsg.Handler) (*Conn, *discardConn, []byte) {
	dc := &discardConn{wake: make(chan struct{}, 1)}
	c := NewConn(dc, h, testPool, nil)
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	block := func() []byte {
		buf.Reset()
		for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":path", "/hello"},
			{":authority", "localhost:8080"}, {"user-agent", "bench/1.0"}, {"accept", "*/*"}} {
			_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		return bytes.Clone(buf.Bytes())
	}
	in := append([]byte(clientPreface), frame.AppendSettings(nil)...)
	// A generous connection window, as a load generator grants.
	in = frame.AppendWindowUpdate(in, 0, frame.MaxWindow-65535)
	in = frame.AppendHeaders(in, 1, true, true, block())
	if n, err := c.OnData(in); err != nil || n != len(in) {
		tb.Fatalf("warm-up: %d %v", n, err)
	}
	req := frame.AppendHeaders(nil, 3, true, true, block())
	if n, err := c.OnData(req); err != nil || n != len(req) {
		tb.Fatalf("warm-up: %d %v", n, err)
	}
	return c, dc, req
}

// setStreamID rewrites the stream id of the frame at the start of b.
func setStreamID(b []byte, id uint32) { binary.BigEndian.PutUint32(b[5:9], id) }

func TestAllocsInlineGET(t *testing.T) {
	c, dc, req := warmConn(t, inlineHello{})
	id := uint32(5)
	before := dc.n
	allocs := testing.AllocsPerRun(1000, func() {
		setStreamID(req, id)
		id += 2
		if _, err := c.OnData(req); err != nil {
			t.Fatal(err)
		}
	})
	if dc.n == before {
		t.Fatal("no response written")
	}
	if allocs != 0 {
		t.Fatalf("%v allocations per warm inline GET, want 0", allocs)
	}
	if c.streams.len() != 0 {
		t.Fatalf("%d streams left open", c.streams.len())
	}
}

func BenchmarkServeH2(b *testing.B) {
	b.Run("inline", func(b *testing.B) {
		c, _, req := warmConn(b, inlineHello{})
		id := uint32(5)
		b.ReportAllocs()
		for b.Loop() {
			setStreamID(req, id)
			id += 2
			if id > 1<<31-2 {
				b.Fatal("stream ids exhausted")
			}
			if _, err := c.OnData(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("worker", func(b *testing.B) {
		c, dc, req := warmConn(b, workerHello{})
		id := uint32(5)
		b.ReportAllocs()
		for b.Loop() {
			setStreamID(req, id)
			id += 2
			if _, err := c.OnData(req); err != nil {
				b.Fatal(err)
			}
			for c.Busy() {
				<-dc.wake
				if err := c.OnWake(); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("worker-batch16", func(b *testing.B) {
		c, dc, req := warmConn(b, workerHello{})
		batch := bytes.Repeat(req, 16)
		id := uint32(5)
		b.ReportAllocs()
		for b.Loop() {
			for i := range 16 {
				setStreamID(batch[i*len(req):], id)
				id += 2
			}
			if _, err := c.OnData(batch); err != nil {
				b.Fatal(err)
			}
			for c.Busy() {
				<-dc.wake
				if err := c.OnWake(); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/req")
	})
	b.Run("inline-batch16", func(b *testing.B) {
		c, _, req := warmConn(b, inlineHello{})
		batch := bytes.Repeat(req, 16)
		id := uint32(5)
		b.ReportAllocs()
		for b.Loop() {
			for i := range 16 {
				setStreamID(batch[i*len(req):], id)
				id += 2
			}
			if _, err := c.OnData(batch); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/req")
	})
}
