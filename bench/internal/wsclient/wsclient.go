// Package wsclient is the WebSocket (RFC 6455) side of the load generator:
// the opening handshake written by hand, masked client frames built once and
// sent again and again, and an incremental parser of the server's frames
// that counts whole messages without keeping their bytes. It does no I/O of
// its own except Echo, the blocking one-message check the suite runs before
// measuring; the load package drives the sockets.
package wsclient

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// Opcodes (RFC 6455 §5.2).
const (
	OpContinuation = 0x0
	OpText         = 0x1
	OpBinary       = 0x2
	OpClose        = 0x8
	OpPing         = 0x9
	OpPong         = 0xA
)

// Key is the Sec-WebSocket-Key every connection sends (16 bytes, base64; a
// server cannot tell a fixed key from a random one).
const Key = "Y2VsZXJpcy1iZW5jaC0xNg=="

// Accept is the Sec-WebSocket-Accept a server must answer to key (§4.2.2).
func Accept(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}

// AppendHandshake appends the opening handshake's request (§4.1) to dst.
func AppendHandshake(dst []byte, host, path string) []byte {
	dst = append(dst, "GET "...)
	dst = append(dst, path...)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, host...)
	dst = append(dst, "\r\nUser-Agent: celeris-bench\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"...)
	dst = append(dst, "Sec-WebSocket-Key: "...)
	dst = append(dst, Key...)
	dst = append(dst, "\r\nSec-WebSocket-Version: 13\r\n\r\n"...)
	return dst
}

// ErrHandshake means the server did not switch protocols correctly.
var ErrHandshake = errors.New("wsclient: bad handshake response")

// maxHandshake bounds the handshake response's head.
const maxHandshake = 8 << 10

// CheckHandshake looks for the end of the response head in buf. It returns
// n = 0 while the head is incomplete, else the head's length (bytes after it
// are frames) and whether it is a valid 101 with the right accept key.
func CheckHandshake(buf []byte) (n int, err error) {
	end := bytes.Index(buf, []byte("\r\n\r\n"))
	if end < 0 {
		if len(buf) > maxHandshake {
			return 0, fmt.Errorf("%w: no end of head in %d bytes", ErrHandshake, len(buf))
		}
		return 0, nil
	}
	head := buf[:end+2]
	line, rest, _ := bytes.Cut(head, []byte("\r\n"))
	if !bytes.HasPrefix(line, []byte("HTTP/1.1 101")) {
		return 0, fmt.Errorf("%w: %q", ErrHandshake, line)
	}
	want := Accept(Key)
	ok := false
	for len(rest) > 0 {
		var f []byte
		f, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		name, value, found := bytes.Cut(f, []byte(":"))
		if found && bytes.EqualFold(bytes.TrimSpace(name), []byte("Sec-WebSocket-Accept")) {
			ok = string(bytes.TrimSpace(value)) == want
		}
	}
	if !ok {
		return 0, fmt.Errorf("%w: missing or wrong Sec-WebSocket-Accept", ErrHandshake)
	}
	return end + 4, nil
}

// Mask is the masking key of every client frame: fixed, so a frame is built
// once, but not zero, so every server really unmasks (§5.3).
var Mask = [4]byte{0x37, 0xfa, 0x21, 0x3d}

// AppendFrame appends one final, masked client frame with opcode op and
// payload p (§5.2).
func AppendFrame(dst []byte, op byte, p []byte) []byte {
	dst = append(dst, 0x80|op)
	switch n := len(p); {
	case n <= 125:
		dst = append(dst, 0x80|byte(n))
	case n <= 0xffff:
		dst = append(dst, 0x80|126, byte(n>>8), byte(n))
	default:
		dst = append(dst, 0x80|127, 0, 0, 0, 0, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	dst = append(dst, Mask[:]...)
	for i, b := range p {
		dst = append(dst, b^Mask[i&3])
	}
	return dst
}

// Errors of the parser.
var (
	ErrServerClose = errors.New("wsclient: the server sent a close frame")
	ErrProtocol    = errors.New("wsclient: protocol error")
)

// Parser reads the server's frames incrementally and counts the messages that
// end, checking each is one data message of the expected length. Control frames
// other than close (pings, pongs) are skipped. It keeps no payload unless
// Capture is set. The zero value with Want set is ready.
type Parser struct {
	// Want is the length every message must have.
	Want int
	// Capture keeps the payload of the last message (Payload).
	Capture bool

	hdr     [14]byte
	hn      int    // header bytes gathered
	inFrame bool   // reading a payload
	left    uint64 // payload bytes left in the frame
	fin     bool
	ctrl    bool // the frame is a control frame (skipped)
	started bool // a message is in progress (continuations allowed)
	op      byte // opcode of the message in progress
	got     int  // payload bytes of the message so far
	// Payload is the last message's payload (with Capture only).
	Payload []byte
	// Op is the last message's opcode.
	Op byte
}

// headerLen returns the length of a server frame's header from its first two
// bytes.
func headerLen(b0, b1 byte) int {
	n := 2
	switch b1 & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if b1&0x80 != 0 {
		n += 4
	}
	return n
}

// Feed parses b and returns how many messages ended in it.
func (p *Parser) Feed(b []byte) (done int, err error) {
	for len(b) > 0 {
		if !p.inFrame {
			if p.hn < 2 {
				k := copy(p.hdr[p.hn:2], b)
				p.hn += k
				b = b[k:]
				if p.hn < 2 {
					return done, nil
				}
			}
			full := headerLen(p.hdr[0], p.hdr[1])
			if p.hn < full {
				k := copy(p.hdr[p.hn:full], b)
				p.hn += k
				b = b[k:]
				if p.hn < full {
					return done, nil
				}
			}
			if err := p.header(full); err != nil {
				return done, err
			}
			if p.left == 0 {
				ended, err := p.endFrame()
				if err != nil {
					return done, err
				}
				if ended {
					done++
				}
			}
			continue
		}
		k := len(b)
		if uint64(k) > p.left {
			k = int(p.left)
		}
		if !p.ctrl {
			p.got += k
			if p.Capture {
				p.Payload = append(p.Payload, b[:k]...)
			}
		}
		p.left -= uint64(k)
		b = b[k:]
		if p.left == 0 {
			ended, err := p.endFrame()
			if err != nil {
				return done, err
			}
			if ended {
				done++
			}
		}
	}
	return done, nil
}

// header decodes a complete frame header of length full.
func (p *Parser) header(full int) error {
	h := p.hdr[:full]
	p.hn = 0
	if h[0]&0x70 != 0 {
		return fmt.Errorf("%w: reserved bits set (no extension was negotiated)", ErrProtocol)
	}
	if h[1]&0x80 != 0 {
		return fmt.Errorf("%w: masked server frame", ErrProtocol)
	}
	var n uint64
	switch h[1] & 0x7f {
	case 126:
		n = uint64(h[2])<<8 | uint64(h[3])
	case 127:
		for _, c := range h[2:10] {
			n = n<<8 | uint64(c)
		}
	default:
		n = uint64(h[1] & 0x7f)
	}
	op := h[0] & 0x0f
	p.fin = h[0]&0x80 != 0
	p.left = n
	p.inFrame = true
	p.ctrl = op >= 8
	switch {
	case op == OpClose:
		return ErrServerClose
	case p.ctrl:
	case op == OpContinuation:
		if !p.started {
			return fmt.Errorf("%w: continuation without a message", ErrProtocol)
		}
	case p.started:
		return fmt.Errorf("%w: new message (opcode %d) inside a fragmented one", ErrProtocol, op)
	default:
		p.started, p.op, p.got = true, op, 0
		if p.Capture {
			p.Payload = p.Payload[:0]
		}
	}
	if !p.ctrl && uint64(p.got)+n > uint64(p.Want) {
		return fmt.Errorf("%w: message longer than the %d bytes sent", ErrProtocol, p.Want)
	}
	return nil
}

// endFrame closes the current frame and reports whether a message ended,
// checking that message.
func (p *Parser) endFrame() (bool, error) {
	p.inFrame = false
	if p.ctrl {
		p.ctrl = false
		return false, nil
	}
	if !p.fin {
		return false, nil
	}
	p.started = false
	p.Op = p.op
	got := p.got
	p.got = 0
	if got != p.Want {
		return false, fmt.Errorf("%w: echo of %d bytes, sent %d", ErrProtocol, got, p.Want)
	}
	if p.op != OpBinary {
		return false, fmt.Errorf("%w: echo with opcode %d, sent binary", ErrProtocol, p.op)
	}
	return true, nil
}

// Echo dials addr, upgrades on path, sends msg once as a binary message and
// checks that the same bytes come back in a binary message, within timeout.
func Echo(addr, path string, msg []byte, timeout time.Duration) error {
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(timeout))
	if _, err := nc.Write(AppendHandshake(nil, addr, path)); err != nil {
		return err
	}
	buf := make([]byte, 0, 4096)
	var head int
	for head == 0 {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := nc.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if head, err = handshakeOrErr(buf, err); err != nil {
			return err
		}
	}
	if _, err := nc.Write(AppendFrame(nil, OpBinary, msg)); err != nil {
		return err
	}
	p := Parser{Want: len(msg), Capture: true}
	rest := buf[head:]
	rb := make([]byte, 32<<10)
	for {
		done, err := p.Feed(rest)
		if err != nil {
			return err
		}
		if done > 0 {
			break
		}
		n, err := nc.Read(rb)
		if n == 0 && err != nil {
			return fmt.Errorf("reading the echo: %w", err)
		}
		rest = rb[:n]
	}
	if !bytes.Equal(p.Payload, msg) {
		return fmt.Errorf("%w: the echo differs from the message sent", ErrProtocol)
	}
	// A clean close (status 1000), best effort.
	nc.Write(AppendFrame(nil, OpClose, []byte{0x03, 0xe8}))
	return nil
}

func handshakeOrErr(buf []byte, readErr error) (int, error) {
	n, err := CheckHandshake(buf)
	if err != nil || n > 0 {
		return n, err
	}
	if readErr != nil {
		if readErr == io.EOF {
			return 0, fmt.Errorf("%w: connection closed after %d bytes: %q", ErrHandshake, len(buf), trim(buf))
		}
		return 0, readErr
	}
	return 0, nil
}

func trim(b []byte) string {
	if len(b) > 120 {
		return string(b[:120]) + "..."
	}
	return string(b)
}

// FrameLen is the length of a masked client frame with an n-byte payload.
func FrameLen(n int) int {
	switch {
	case n <= 125:
		return 6 + n
	case n <= 0xffff:
		return 8 + n
	}
	return 14 + n
}
