package protoselect

import (
	"bytes"
	"crypto/tls"
	"errors"
	"net"
	"testing"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// fakeConn is an httpmsg.Conn that records what is written; tls makes it an
// httpmsg.TLSConn.
type fakeConn struct {
	out    []byte
	closed bool
}

func (c *fakeConn) Write(b []byte)       { c.out = append(c.out, b...) }
func (c *fakeConn) Wake()                {}
func (c *fakeConn) Close()               { c.closed = true }
func (c *fakeConn) RemoteAddr() net.Addr { return nil }

type tlsConn struct {
	fakeConn
	st tls.ConnectionState
}

func (c *tlsConn) TLSConnectionState() *tls.ConnectionState { return &c.st }

// named is a Proto that says which factory built it.
type named struct{ name string }

func (named) OnData(in []byte) (int, error) { return len(in), nil }
func (named) OnWake() error                 { return nil }
func (named) OnClose(error)                 {}
func (named) Busy() bool                    { return false }

func protocols(h2 bool) *Protocols {
	p := &Protocols{NewH1: func(httpmsg.Conn) httpmsg.Proto { return named{"h1"} }}
	if h2 {
		p.NewH2 = func(httpmsg.Conn) httpmsg.Proto { return named{"h2"} }
	}
	return p
}

func nameOf(p httpmsg.Proto) string {
	switch p := p.(type) {
	case nil:
		return "wait"
	case named:
		return p.name
	case refused:
		return "refused"
	}
	return "?"
}

func TestChoose(t *testing.T) {
	preface := string(Preface)
	for _, tc := range []struct {
		name   string
		h2     bool
		tls    bool
		alpn   string
		in     string
		want   string
		closed bool
	}{
		{name: "nothing yet", h2: true, in: "", want: "wait"},
		{name: "preface prefix", h2: true, in: "PRI * HTTP/2", want: "wait"},
		{name: "full preface", h2: true, in: preface, want: "h2"},
		{name: "preface and frames", h2: true, in: preface + "\x00\x00\x00\x04", want: "h2"},
		{name: "request", h2: true, in: "GET / HTTP/1.1\r\n", want: "h1"},
		{name: "one byte, not P", h2: true, in: "G", want: "h1"},
		{name: "diverges late", h2: true, in: "PRI * HTTP/1.1\r\n", want: "h1"},
		{name: "preface, h2 off", in: preface, want: "refused", closed: true},
		{name: "prefix, h2 off", in: "PRI", want: "wait"},
		{name: "request, h2 off", in: "GET /", want: "h1"},
		{name: "TLS h2", h2: true, tls: true, alpn: "h2", want: "h2"},
		{name: "TLS http/1.1", h2: true, tls: true, alpn: "http/1.1", want: "h1"},
		{name: "TLS no ALPN", h2: true, tls: true, want: "h1"},
		{name: "TLS no ALPN, preface bytes ignored", h2: true, tls: true, in: preface, want: "h1"},
		{name: "TLS h2, h2 off", tls: true, alpn: "h2", want: "h1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c httpmsg.Conn
			fc := &fakeConn{}
			c = fc
			if tc.tls {
				tcn := &tlsConn{st: tls.ConnectionState{NegotiatedProtocol: tc.alpn}}
				c, fc = tcn, &tcn.fakeConn
			}
			got := nameOf(protocols(tc.h2).Choose(c, []byte(tc.in)))
			if got != tc.want {
				t.Fatalf("Choose = %s, want %s", got, tc.want)
			}
			if fc.closed != tc.closed {
				t.Fatalf("closed = %v, want %v", fc.closed, tc.closed)
			}
			if tc.closed && !bytes.HasPrefix(fc.out, []byte("HTTP/1.1 505 ")) {
				t.Fatalf("answer %q, want a 505", fc.out)
			}
		})
	}
}

// RefuseH2 replaces the plain 505.
func TestChooseRefuseH2(t *testing.T) {
	p := protocols(false)
	p.RefuseH2 = func() []byte { return []byte("custom") }
	c := &fakeConn{}
	if got := nameOf(p.Choose(c, Preface)); got != "refused" || string(c.out) != "custom" || !c.closed {
		t.Fatalf("Choose = %s, wrote %q, closed %v", got, c.out, c.closed)
	}
}

// switching is a Proto that hands over to next (ProtoSwitcher) or asks for h2c
// (Upgrader).
type switching struct {
	named
	next httpmsg.Proto
	req  *httpmsg.Request
}

func (s *switching) TakeSwitch() httpmsg.Proto { return s.next }
func (s *switching) TakeUpgrade() (*httpmsg.Request, []byte) {
	return s.req, []byte{0, 3, 0, 0, 0, 100}
}

func TestNext(t *testing.T) {
	errUp := errors.New("bad settings")
	upgrade := func(_ httpmsg.Conn, req *httpmsg.Request, settings []byte) (httpmsg.Proto, error) {
		if len(settings) != 6 || req.Method != "GET" {
			return nil, errUp
		}
		return named{"h2c"}, nil
	}
	failing := func(httpmsg.Conn, *httpmsg.Request, []byte) (httpmsg.Proto, error) { return nil, errUp }
	get := &httpmsg.Request{Method: "GET"}
	for _, tc := range []struct {
		name    string
		cur     httpmsg.Proto
		upgrade func(httpmsg.Conn, *httpmsg.Request, []byte) (httpmsg.Proto, error)
		want    string
		err     error
	}{
		{name: "handler switched", cur: &switching{next: named{"ws"}}, upgrade: upgrade, want: "ws"},
		{name: "h2c", cur: &switching{req: get}, upgrade: upgrade, want: "h2c"},
		{name: "h2c off", cur: &switching{req: get}, err: httpmsg.ErrUpgrade},
		{name: "h2c fails", cur: &switching{req: get}, upgrade: failing, err: errUp},
		{name: "no request", cur: &switching{}, upgrade: upgrade, err: httpmsg.ErrUpgrade},
		{name: "protocol offers neither", cur: named{"h2"}, upgrade: upgrade, err: httpmsg.ErrUpgrade},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := protocols(true)
			p.Upgrade = tc.upgrade
			got, err := p.Next(&fakeConn{}, tc.cur)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if err == nil && nameOf(got) != tc.want {
				t.Fatalf("Next = %s, want %s", nameOf(got), tc.want)
			}
		})
	}
}

// FuzzChoose: whatever arrives, Choose waits only on a strict prefix of the
// preface, and picks HTTP/2 only for the whole preface.
func FuzzChoose(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Add(Preface)
	f.Add(Preface[:5])
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, h2 := range []bool{true, false} {
			c := &fakeConn{}
			got := nameOf(protocols(h2).Choose(c, in))
			strict := len(in) < len(Preface) && bytes.HasPrefix(Preface, in)
			full := bytes.HasPrefix(in, Preface)
			switch {
			case strict && got != "wait",
				full && h2 && got != "h2",
				full && !h2 && got != "refused",
				!strict && !full && got != "h1":
				t.Fatalf("Choose(%q, h2 %v) = %s", in, h2, got)
			}
		}
	})
}
