package celeris

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// proto is one way a client reaches the server; behaviour tests run under each.
type proto struct {
	name   string
	client func() *http.Client
}

// h1Client speaks HTTP/1.1 only.
func h1Client() *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetHTTP1(true)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// h2cClient speaks HTTP/2 over cleartext with prior knowledge (net/http).
func h2cClient() *http.Client {
	tr := &http.Transport{}
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

// xnetH2cClient uses golang.org/x/net/http2's transport over plain TCP.
func xnetH2cClient() *http.Client {
	tr := &http2.Transport{
		AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

var protos = []proto{
	{name: "h1", client: h1Client},
	{name: "h2c", client: h2cClient},
	{name: "h2c-xnet", client: xnetH2cClient},
}

// forEachProto runs fn once per protocol, each as a subtest.
func forEachProto(t *testing.T, fn func(t *testing.T, c *http.Client, proto string)) {
	for _, p := range protos {
		t.Run(p.name, func(t *testing.T) {
			c := p.client()
			defer c.CloseIdleConnections()
			fn(t, c, p.name)
		})
	}
}

// wantProto checks that a response came over the expected protocol.
func wantProto(t *testing.T, resp *http.Response, proto string) {
	t.Helper()
	want := 1
	if proto != "h1" {
		want = 2
	}
	if resp.ProtoMajor != want {
		t.Fatalf("response over %s, want HTTP/%d", resp.Proto, want)
	}
}
