// Package h3client is the suite's HTTP/3 client: quic-go's http3.Transport
// over one QUIC connection to a server on the loopback, its certificate not
// verified (the servers make a self-signed one at start). Many goroutines may
// send requests on one Conn at once: each request is a stream of that
// connection.
package h3client

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// Conn is one HTTP/3 connection (dialled by the first request, again after it
// died).
type Conn struct {
	addr string
	tr   *http3.Transport
}

// New returns a Conn to addr (host:port on UDP) whose requests each end
// within timeout.
func New(addr string, timeout time.Duration) *Conn {
	return &Conn{addr: addr, tr: &http3.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{http3.NextProtoH3}},
		// No Accept-Encoding: the other loaders send none, so no server
		// compresses (the demo gzips /json for a client that asks).
		DisableCompression: true,
		QUICConfig:         &quic.Config{HandshakeIdleTimeout: timeout, MaxIncomingStreams: 1000},
	}}
}

// Response is a request's answer; Body is fresh, the caller's to keep.
type Response struct {
	Status int
	Body   []byte
}

// Do sends one request and reads its whole answer (discarded unless capture).
func (c *Conn) Do(ctx context.Context, method, path string, body []byte, capture bool) (Response, error) {
	var rb io.Reader
	if body != nil {
		rb = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, "https://"+c.addr+path, rb)
	if err != nil {
		return Response{}, err
	}
	if body != nil {
		req.ContentLength = int64(len(body))
	}
	resp, err := c.tr.RoundTrip(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	out := Response{Status: resp.StatusCode}
	if capture {
		out.Body, err = io.ReadAll(resp.Body)
	} else {
		_, err = io.Copy(io.Discard, resp.Body)
	}
	return out, err
}

// Close closes the connection; requests in flight fail.
func (c *Conn) Close() error { return c.tr.Close() }
