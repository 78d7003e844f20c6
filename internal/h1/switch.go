package h1

import (
	"errors"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// ErrNoSwitch is returned by Switch for a request that did not ask to switch
// protocols (Upgrade and Connection: upgrade), has a body, is HTTP/1.0, or was
// already answered.
var ErrNoSwitch = errors.New("h1: the request cannot switch protocols")

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
