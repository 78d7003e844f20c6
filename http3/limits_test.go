package celerish3

import (
	"context"
	"crypto/tls"
	"io"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
)

// TestConcurrentStreamsLimit: Config.MaxConcurrentStreams is QUIC's
// MAX_STREAMS for request streams: a client cannot open more at once, and may
// open another once one is done.
func TestConcurrentStreamsLimit(t *testing.T) {
	c := dialRaw(t, wireServer(t, Config{MaxConcurrentStreams: 2}))
	c.control()
	var open []*quic.Stream
	for i := 0; i < 2; i++ {
		s, err := c.qc.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, s)
	}
	if _, err := c.qc.OpenStream(); err == nil {
		t.Fatal("a third stream opened past the limit of 2")
	}
	// The first request completes; its stream's credit comes back.
	if _, err := open[0].Write(getHeaders); err != nil {
		t.Fatal(err)
	}
	_ = open[0].Close()
	if _, err := io.ReadAll(open[0]); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatalf("no stream after one completed: %v", err)
	}
	s.CancelWrite(0)
}

// TestIdleTimeout: the server closes a connection without traffic after
// Config.IdleTimeout (silently, RFC 9000 §10.1; the client notices on its own
// timer, which quic-go keeps at 5 s or more).
func TestIdleTimeout(t *testing.T) {
	addr, h := wireServerH(t, Config{IdleTimeout: 300 * time.Millisecond})
	c := dialRaw(t, addr)
	c.control()
	if resp, err := c.request(getHeaders, true); err != nil || status(t, resp) != "200" {
		t.Fatalf("%q %v", resp, err)
	}
	if n := h.OpenConnections(); n != 1 {
		t.Fatalf("open connections %d", n)
	}
	deadline := time.Now().Add(3 * time.Second)
	for h.OpenConnections() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle connection stayed open")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Test0RTT: with Allow0RTT a resumed client's request in 0-RTT data is served
// (a GET at once; a POST once the handshake completes); without it the server
// refuses 0-RTT and the request is served after the handshake.
func Test0RTT(t *testing.T) {
	for _, allow := range []bool{true, false} {
		addr := wireServer(t, Config{Allow0RTT: allow})
		cache := tls.NewLRUClientSessionCache(4)
		tc := &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}, ClientSessionCache: cache}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		qc, err := quic.DialAddr(ctx, addr, tc, &quic.Config{})
		if err != nil {
			t.Fatal(err)
		}
		// A request, so that the session ticket has arrived when it is answered.
		c := &rawClient{t: t, qc: qc}
		if resp, err := c.request(getHeaders, true); err != nil || status(t, resp) != "200" {
			t.Fatalf("%q %v", resp, err)
		}
		_ = qc.CloseWithError(0, "")
		qc, err = quic.DialAddrEarly(ctx, addr, tc, &quic.Config{})
		if err != nil {
			t.Fatal(err)
		}
		c = &rawClient{t: t, qc: qc}
		post := frameBytes(frameHeaders, block(":method", "POST", ":scheme", "https", ":path", "/read", ":authority", "a"))
		post = append(post, frameBytes(frameData, []byte("early"))...)
		for _, req := range [][]byte{getHeaders, post} {
			resp, err := c.request(req, true)
			if err != nil || status(t, resp) != "200" {
				t.Fatalf("allow %v: %q %v", allow, resp, err)
			}
		}
		if used := qc.ConnectionState().Used0RTT; used != allow {
			t.Fatalf("allow %v: 0-RTT used %v", allow, used)
		}
		_ = qc.CloseWithError(0, "")
		cancel()
	}
}

// TestReadHeaderTimeout: a request stream whose header section does not
// arrive in time (slowloris) is reset with H3_REQUEST_INCOMPLETE; the
// connection serves on.
func TestReadHeaderTimeout(t *testing.T) {
	c := dialRaw(t, wireServer(t, Config{ReadHeaderTimeout: 200 * time.Millisecond}))
	c.control()
	start := time.Now()
	_, err := c.request(getHeaders[:3], false) // part of a HEADERS frame, then nothing
	if code := streamCode(err); code != ErrCodeRequestIncomplete {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("reset after %v", d)
	}
	if resp, err := c.request(getHeaders, true); err != nil || status(t, resp) != "200" {
		t.Fatalf("%q %v", resp, err)
	}
}
