package ws

import "github.com/celeris-dev/celeris/internal/bufpool"

// Reader turns a server's incoming bytes into messages (RFC 6455 §5.4, §6.2). It is
// incremental and pure: Feed takes whatever arrived, consumes what it can, and
// reports events through the Events it was given; bytes of a frame header that is
// not complete yet are left unconsumed and come back with the next Feed.
//
// Rules it enforces (each closes the connection with the code CloseCodeFor gives):
// every ParseHeader rule; a continuation frame without a message in progress, a new
// data frame inside a fragmented message (§5.4); invalid UTF-8 in a text message,
// failing as soon as a piece cannot be completed (§8.1), or in a close reason;
// invalid close codes (§7.4); a message longer than MaxMessage (1009). Control
// frames may arrive between the fragments of a message (§5.4) and are reported at
// once.
type Reader struct {
	// MaxMessage bounds a message's payload (all fragments together; after
	// inflation when compressed). 0 means no bound.
	MaxMessage int64
	// Deflate allows RSV1 on a message's first frame (permessage-deflate was
	// negotiated, RFC 7692 §6).
	Deflate bool

	hdr     Header
	inFrame bool  // hdr is parsed; its payload is being read
	got     int64 // payload bytes of the current frame consumed so far

	msgOp   Opcode // opcode of the message in progress (0: none)
	msgComp bool   // the message in progress is compressed (RSV1 on its first frame)
	msgLen  int64  // payload bytes of the message in progress so far
	msg     []byte // the message in progress, unmasked
	ctrl    []byte // the control frame in progress, unmasked
	utf8    UTF8Validator
}

// Events receives what a Reader found. Slices are borrowed: valid until the call
// returns.
type Events interface {
	// Message reports a complete data message (text or binary); compressed says
	// permessage-deflate compressed it (the payload is still deflated).
	Message(op Opcode, payload []byte, compressed bool) error
	// Control reports a ping, pong or close frame (close payload already checked
	// by ParseClose).
	Control(op Opcode, payload []byte) error
}

// Reset drops any partial frame or message and releases the message buffer when
// it grew past keep bytes.
func (r *Reader) Reset(keep int) {
	r.inFrame, r.got, r.msgOp, r.msgComp, r.msgLen = false, 0, 0, false, 0
	r.utf8.Reset()
	if cap(r.msg) > keep {
		r.releaseMsg()
	}
	r.msg, r.ctrl = r.msg[:0], r.ctrl[:0]
}

// releaseMsg gives a large message buffer back to the pool (bufpool): a large
// message's buffer stays with the Reader only while the message is read.
func (r *Reader) releaseMsg() {
	if cap(r.msg) > smallMsg {
		bufpool.Put(r.msg)
	}
	r.msg = nil
}

// smallMsg: message buffers up to this capacity stay with the Reader (and are
// grown by append); larger ones come from bufpool.
const smallMsg = 4 << 10

// reserve makes room in the message buffer for the rest of the current frame,
// of which p arrived: a message that outgrows smallMsg moves to a pooled buffer
// of the size the frame needs, when that is at most bufpool.MaxSize and at most
// twice what is at hand (a header alone never claims memory); otherwise the
// buffer grows by append as the bytes arrive.
func (r *Reader) reserve(p []byte) {
	have := int64(len(r.msg)) + int64(len(p))
	need := int64(len(r.msg)) + r.hdr.Length - r.got
	if have <= int64(cap(r.msg)) || need <= smallMsg || need > bufpool.MaxSize || need > 2*have {
		return
	}
	b := append(bufpool.Get(int(need)), r.msg...)
	if cap(r.msg) > smallMsg {
		bufpool.Put(r.msg)
	}
	r.msg = b
}

// InMessage reports whether a fragmented message is in progress.
func (r *Reader) InMessage() bool { return r.msgOp != 0 }

// Feed consumes frames from in (a client's bytes) and unmasks their payloads into
// the Reader's buffers (in itself is not modified). It returns how many bytes it
// consumed; an error is a protocol violation (or one returned by ev) and ends the
// connection.
func (r *Reader) Feed(in []byte, ev Events) (int, error) {
	n := 0
	for {
		if !r.inFrame {
			hn, err := ParseHeader(in[n:], &r.hdr, true, r.Deflate)
			if err == ErrNeedMore {
				return n, nil
			}
			if err != nil {
				return n, err
			}
			if err := r.startFrame(); err != nil {
				return n, err
			}
			n += hn
			r.inFrame, r.got = true, 0
		}
		// Payload bytes available for this frame.
		avail := int64(len(in) - n)
		if left := r.hdr.Length - r.got; avail > left {
			avail = left
		}
		if avail > 0 {
			if err := r.payload(in[n : n+int(avail)]); err != nil {
				return n, err
			}
			n += int(avail)
			r.got += avail
		}
		if r.got < r.hdr.Length {
			return n, nil // the rest of the payload has not arrived
		}
		r.inFrame = false
		if err := r.endFrame(ev); err != nil {
			return n, err
		}
		if n == len(in) {
			return n, nil
		}
	}
}

// startFrame checks a new frame's place in the message sequence (§5.4).
func (r *Reader) startFrame() error {
	h := &r.hdr
	if h.Op.IsControl() {
		r.ctrl = r.ctrl[:0]
		return nil
	}
	if h.Op == OpContinuation {
		if r.msgOp == 0 {
			return ErrContinuation
		}
		if h.RSV1 {
			return ErrReservedBits // RFC 7692 §6.1: RSV1 on the first frame only
		}
	} else {
		if r.msgOp != 0 {
			return ErrFragmentStart
		}
		r.msgOp, r.msgComp, r.msgLen = h.Op, h.RSV1, 0
		r.msg = r.msg[:0]
		r.utf8.Reset()
	}
	r.msgLen += h.Length
	if r.MaxMessage > 0 && r.msgLen > r.MaxMessage {
		// Compressed, the bound applies to the wire size here and to the
		// inflated size later (Deflate.Inflate).
		return ErrMessageTooBig
	}
	return nil
}

// payload unmasks a piece of the current frame's payload into the right buffer.
func (r *Reader) payload(p []byte) error {
	h := &r.hdr
	var dst *[]byte
	if h.Op.IsControl() {
		dst = &r.ctrl
	} else {
		dst = &r.msg
	}
	if !h.Op.IsControl() {
		r.reserve(p)
	}
	start := len(*dst)
	if cap(*dst)-start >= len(p) {
		// Copied and unmasked in one pass.
		*dst = (*dst)[:start+len(p)]
		MaskCopy(h.Mask, int(r.got), (*dst)[start:], p)
	} else {
		*dst = append(*dst, p...)
		Mask(h.Mask, int(r.got), (*dst)[start:])
	}
	if !h.Op.IsControl() && r.msgOp == OpText && !r.msgComp {
		if !r.utf8.Write((*dst)[start:]) {
			return ErrBadUTF8
		}
	}
	return nil
}

// endFrame reports what a complete frame completed.
func (r *Reader) endFrame(ev Events) error {
	h := &r.hdr
	if h.Op.IsControl() {
		if h.Op == OpClose {
			if _, _, err := ParseClose(r.ctrl); err != nil {
				return err
			}
		}
		return ev.Control(h.Op, r.ctrl)
	}
	if !h.Fin {
		return nil
	}
	if r.msgOp == OpText && !r.msgComp && !r.utf8.Done() {
		return ErrBadUTF8
	}
	op, comp := r.msgOp, r.msgComp
	r.msgOp, r.msgComp = 0, false
	return ev.Message(op, r.msg, comp)
}
