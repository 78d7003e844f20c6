// Package protoselect chooses a connection's protocol. It is the one place that
// knows how: every transport (the gnet engine, the std engine, and any other
// that carries bytes for these protocols) calls Choose when a connection opens
// and Next when its protocol hands over, and none of them knows a protocol
// beyond httpmsg.Conn and httpmsg.Proto.
//
//   - Over TLS (the Conn is an httpmsg.TLSConn), ALPN chooses (RFC 7301): "h2"
//     selects HTTP/2 at once (RFC 9113 §3.2, the client preface follows the
//     handshake), anything else or nothing HTTP/1.1. The TLS requirements of
//     HTTP/2 (RFC 9113 §9.2) are HTTP/2's to check (internal/h2).
//   - In cleartext the first bytes choose: the HTTP/2 client connection preface
//     (RFC 9113 §3.4, prior knowledge) selects HTTP/2, anything else HTTP/1.1.
//     With HTTP/2 off, the preface gets an HTTP/1.1 answer (505) and a close.
//   - A protocol hands over by returning httpmsg.ErrUpgrade: a handler that
//     switched the connection (101, WebSocket: httpmsg.ProtoSwitcher), or the
//     h2c upgrade (RFC 7540 §3.2: httpmsg.Upgrader).
package protoselect

import (
	"bytes"

	"github.com/celeris-dev/celeris/internal/h1"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// Preface is the HTTP/2 client connection preface (RFC 9113 §3.4).
var Preface = []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")

// Protocols are the protocols a listener serves, as the framework builds them
// for a connection. The functions run on the connection's loop.
type Protocols struct {
	// NewH1 builds HTTP/1.x. For a TLS listener it must never honour
	// Upgrade: h2c (RFC 9113 §3.2: h2 is negotiated by ALPN there).
	NewH1 func(c httpmsg.Conn) httpmsg.Proto
	// NewH2 builds HTTP/2; nil when HTTP/2 is off.
	NewH2 func(c httpmsg.Conn) httpmsg.Proto
	// RefuseH2 is the answer to an HTTP/2 preface when NewH2 is nil (nil: a
	// plain 505 HTTP Version Not Supported).
	RefuseH2 func() []byte
	// Upgrade builds HTTP/2 for an HTTP/1.1 connection that asked for h2c,
	// from the request that asked and its decoded HTTP2-Settings; nil: h2c off
	// (HTTP/1.1 then never asks).
	Upgrade func(c httpmsg.Conn, req *httpmsg.Request, settings []byte) (httpmsg.Proto, error)
}

// Choose returns the protocol of a new connection c. Over TLS the negotiated
// ALPN protocol decides and in is not looked at (call it once the handshake
// completed). In cleartext in is what arrived so far (borrowed for the call):
// Choose returns nil while it is a strict prefix of the HTTP/2 preface (call
// again with more), and a Proto otherwise, which then gets in through OnData.
// When HTTP/2 is off, a preface is answered and c closed here: the Proto
// returned discards the input.
func (p *Protocols) Choose(c httpmsg.Conn, in []byte) httpmsg.Proto {
	if st := httpmsg.TLSState(c); st != nil {
		if st.NegotiatedProtocol == "h2" && p.NewH2 != nil {
			return p.NewH2(c)
		}
		return p.NewH1(c)
	}
	n := min(len(in), len(Preface))
	if !bytes.Equal(in[:n], Preface[:n]) {
		return p.NewH1(c)
	}
	if n < len(Preface) {
		return nil
	}
	if p.NewH2 == nil {
		// Answer as HTTP/1.1 answers "PRI * HTTP/2.0".
		if p.RefuseH2 != nil {
			c.Write(p.RefuseH2())
		} else {
			c.Write(h1.AppendError(nil, &h1.Error{Status: 505, Reason: "HTTP/2 is not enabled here"}, nil))
		}
		c.Close()
		return refused{}
	}
	return p.NewH2(c)
}

// Next returns the protocol that follows cur after cur's OnData or OnWake
// returned httpmsg.ErrUpgrade: the one a handler switched to (ProtoSwitcher),
// else HTTP/2 for an h2c upgrade (Upgrader). It fails with ErrUpgrade when
// there is none (the connection then closes), or with the upgrade's error.
func (p *Protocols) Next(c httpmsg.Conn, cur httpmsg.Proto) (httpmsg.Proto, error) {
	if sw, ok := cur.(httpmsg.ProtoSwitcher); ok {
		if np := sw.TakeSwitch(); np != nil {
			return np, nil
		}
	}
	up, ok := cur.(httpmsg.Upgrader)
	if !ok || p.Upgrade == nil {
		return nil, httpmsg.ErrUpgrade
	}
	req, settings := up.TakeUpgrade()
	if req == nil {
		return nil, httpmsg.ErrUpgrade
	}
	return p.Upgrade(c, req, settings)
}

// refused is the protocol of a connection answered and closed by Choose: the
// rest of its input is dropped until the engine closes it.
type refused struct{}

func (refused) OnData(in []byte) (int, error) { return len(in), nil }
func (refused) OnWake() error                 { return nil }
func (refused) OnClose(error)                 {}
func (refused) Busy() bool                    { return false }

var _ httpmsg.Proto = refused{}
