package h1client

import (
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"time"
)

// Request describes the one request a connection sends over and over.
type Request struct {
	Method string
	Path   string
	Host   string
	// Body is sent with Content-Length when non-nil.
	Body        []byte
	ContentType string
}

// AppendRequest appends the request's wire bytes (RFC 9112 §3) to dst.
func AppendRequest(dst []byte, req Request) []byte {
	dst = append(dst, req.Method...)
	dst = append(dst, ' ')
	dst = append(dst, req.Path...)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, req.Host...)
	dst = append(dst, "\r\nUser-Agent: celeris-bench\r\n"...)
	if req.Body != nil {
		ct := req.ContentType
		if ct == "" {
			ct = "application/octet-stream"
		}
		dst = append(dst, "Content-Type: "...)
		dst = append(dst, ct...)
		dst = append(dst, "\r\nContent-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(req.Body)), 10)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "\r\n"...)
	return append(dst, req.Body...)
}

// Conn is one keep-alive connection that sends the same request, depth at a
// time (pipelining when depth > 1). It is owned by one goroutine.
type Conn struct {
	nc    net.Conn
	rd    *Reader
	batch []byte // depth copies of the request
	depth int
	resp  Response
}

// Dial connects to addr. capture keeps response bodies (for answer checks).
func Dial(addr string, req Request, depth int, timeout time.Duration, capture bool) (*Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	return newConn(nc, req, depth, capture), nil
}

// DialTLS connects to addr over TLS with ALPN http/1.1, without verifying
// the server's certificate (the bench servers' are self-signed), and
// completes the handshake within timeout.
func DialTLS(addr string, req Request, depth int, timeout time.Duration, capture bool) (*Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	cfg := &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}}
	tc, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "" && p != "http/1.1" {
		tc.Close()
		return nil, fmt.Errorf("h1client: server chose ALPN %q, want http/1.1", p)
	}
	return newConn(tc, req, depth, capture), nil
}

func newConn(nc net.Conn, req Request, depth int, capture bool) *Conn {
	if depth < 1 {
		depth = 1
	}
	one := AppendRequest(nil, req)
	batch := make([]byte, 0, len(one)*depth)
	for range depth {
		batch = append(batch, one...)
	}
	return &Conn{nc: nc, rd: NewReader(nc, 64<<10, capture), batch: batch, depth: depth}
}

// NetConn returns the underlying connection (to close it from another
// goroutine, or to set deadlines).
func (c *Conn) NetConn() net.Conn { return c.nc }

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// RoundTrip writes depth requests at once, then reads depth responses, calling
// done for each with its latency measured from the write. resp is valid only
// during the call. After a response with Connection: close it returns
// ErrCloseAfterResponse (the responses read so far were reported).
func (c *Conn) RoundTrip(done func(resp *Response, latency time.Duration)) error {
	start := time.Now()
	if _, err := c.nc.Write(c.batch); err != nil {
		return err
	}
	for range c.depth {
		if err := c.rd.ReadResponse(&c.resp); err != nil {
			return err
		}
		done(&c.resp, time.Since(start))
		if c.resp.Close {
			return ErrCloseAfterResponse
		}
	}
	return nil
}
