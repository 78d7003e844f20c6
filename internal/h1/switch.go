package h1

import (
	"encoding/base64"
	"errors"
	"net"

	"github.com/celeris-dev/celeris/internal/bytesconv"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// ErrNoSwitch is returned by Switch for a request that did not ask to switch
// protocols (Upgrade and Connection: upgrade), has a body, is HTTP/1.0, or was
// already answered.
var ErrNoSwitch = errors.New("h1: the request cannot switch protocols")

// ErrHijackInline is returned by Hijack on an inline route.
var ErrHijackInline = errors.New("h1: Hijack needs a route that runs on a worker, not inline")

// ErrHijacked ends the protocol of a connection that left the engine.
var ErrHijacked = errors.New("h1: connection hijacked")

// Switch answers 101 Switching Protocols with header (RFC 9110 §15.2.2) and hands
// the connection, once the answer is written, to the protocol newProto builds
// (httpmsg.Switcher). OnData parses nothing after a request that asked to switch
// until it is answered, so the bytes that follow the 101 reach the new protocol.
func (ex *exchange) Switch(header []httpmsg.Field, newProto func(httpmsg.Conn) httpmsg.Proto) error {
	if ex.answered {
		return ErrAnswered
	}
	if !ex.upgrade || ex.http10 || ex.hasBody || ex.draining() || newProto == nil {
		return ErrNoSwitch
	}
	ex.answered = true
	dst := append(*ex.out, "HTTP/1.1 101 Switching Protocols\r\n"...)
	dst = appendFields(dst, header, true, ex.validCache())
	*ex.out = append(dst, "\r\n"...)
	// The worker sets it before its final hand-off (under Conn.mu), the loop reads
	// it after: OnWake returns httpmsg.ErrUpgrade and the engine calls TakeSwitch.
	ex.conn.switchTo = newProto
	return nil
}

// TakeSwitch returns the protocol the connection switched to (built now, on the
// loop), or nil when no response switched it.
func (cn *Conn) TakeSwitch() httpmsg.Proto {
	f := cn.switchTo
	if f == nil {
		return nil
	}
	cn.switchTo = nil
	cn.release()
	return f(cn.c)
}

// hijackReq is a worker's request to take the connection out of the engine.
type hijackReq struct {
	done    chan struct{}
	nc      net.Conn
	in, out []byte
	err     error
}

// Hijack takes the connection out of the engine for the handler (net/http's
// Hijacker): no response is written for the exchange; the handler owns the
// connection from then on. On a worker it asks the loop and waits for it. It
// returns the input already read past this request, and output still owed to
// earlier requests, which the caller writes before anything else.
func (ex *exchange) Hijack() (nc net.Conn, buffered, pending []byte, err error) {
	if ex.answered {
		return nil, nil, nil, ErrAnswered
	}
	cn := ex.conn
	if _, ok := cn.c.(httpmsg.Hijacker); !ok {
		return nil, nil, nil, ErrNoSwitch
	}
	if ex.out == &cn.inline {
		// An inline route runs inside OnData, before the engine discards the
		// request's own bytes; and it must not block, which a hijacked
		// connection's handler does.
		return nil, nil, nil, ErrHijackInline
	}
	ex.answered = true
	ex.keepAlive = false
	req := &hijackReq{done: make(chan struct{})}
	if len(*ex.out) > 0 {
		_ = cn.handOff(ex.out, false) // earlier answers of the batch go first
	}
	cn.mu.Lock()
	if cn.closed {
		cn.mu.Unlock()
		return nil, nil, nil, ErrConnClosed
	}
	cn.hijack = req
	cn.mu.Unlock()
	cn.c.Wake()
	<-req.done
	return req.nc, req.in, req.out, req.err
}

// takeHijack serves a worker's Hijack on the loop (from OnWake): ready holds the
// worker's bytes written before it asked, which leave first.
func (cn *Conn) takeHijack(req *hijackReq, ready []byte) error {
	if cn.streamEx != nil {
		// The rest of a streamed body is still in the engine: it goes with the
		// connection (buffered), as net/http's Hijack hands over its bufio.Reader.
		cn.streamEx.pipe.abort(ErrBodyAborted)
		cn.streamEx = nil
	}
	nc, in, out, err := cn.c.(httpmsg.Hijacker).Hijack()
	req.nc, req.in, req.err = nc, in, err
	req.out = append(append([]byte(nil), out...), ready...)
	close(req.done)
	if err != nil {
		return err
	}
	return ErrHijacked // the engine already replaced this protocol and closes its copy
}

// upgrade answers 101 and prepares the h2c hand-over (RFC 7540 §3.2).
func (cn *Conn) upgrade(head []byte, r *Request) error {
	settings, err := base64.RawURLEncoding.DecodeString(trimPadding(bytesconv.B2S(r.HTTP2Settings)))
	if err != nil {
		return cn.fail(&Error{Status: 400, Reason: "invalid HTTP2-Settings"})
	}
	ex := &exchange{conn: cn}
	ex.fill(head, r)
	cn.upReq, cn.upSettings = &ex.msg, settings
	cn.c.Write(switching101)
	return httpmsg.ErrUpgrade
}

func trimPadding(s string) string {
	for len(s) > 0 && s[len(s)-1] == '=' {
		s = s[:len(s)-1]
	}
	return s
}

var switching101 = []byte("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n")
