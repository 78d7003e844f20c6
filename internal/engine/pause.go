//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package engine

import (
	"reflect"
	"unsafe"

	"github.com/panjf2000/gnet/v2"
	"github.com/panjf2000/gnet/v2/pkg/buffer/elastic"
	"github.com/panjf2000/gnet/v2/pkg/netpoll"
)

// Read back-pressure.
//
// gnet reads every readable socket and keeps what the callback did not consume in
// an unbounded inbound buffer; it has no API to stop reading one connection. Without
// one, a client could push gigabytes while its request waits for a slow handler (a
// pipelined flood, or a streamed upload faster than the handler reads it). The engine
// therefore takes the connection's fd out of the loop's poller while too many
// unconsumed bytes are buffered, and puts it back once the protocol consumed them:
// the kernel's receive window then pushes back on the client (TCP flow control).
//
// The poller and the connection's poll attachment (and, for detach.go, its output
// buffer) are unexported fields of gnet's connection. They are located once, by
// name and type, from gnet's types (layout.go), before the engine runs: with
// another layout the engine does not run. The module's other uses of unsafe are
// internal/bytesconv's conversions, internal/bufpool's pooled pointers and
// rawwrite_linux.go's write(2).
var (
	pauseOK        bool    // the fields were found (CheckLayout)
	loopOffset     uintptr // conn.loop (*eventloop)
	pollerOffset   uintptr // eventloop.poller (*netpoll.Poller)
	attachOffset   uintptr // conn.pollAttachment (netpoll.PollAttachment)
	gnetConnType   reflect.Type
	pollerPtrType  = reflect.TypeOf((*netpoll.Poller)(nil))
	attachmentType = reflect.TypeOf(netpoll.PollAttachment{})

	outboundOK     bool    // takeOutbound works (detach.go)
	outboundOffset uintptr // conn.outboundBuffer (elastic.Buffer)
	outboundType   = reflect.TypeOf(elastic.Buffer{})
)

// pollHandles returns gc's poller and attachment, or nils when unavailable.
func pollHandles(gc gnet.Conn) (*netpoll.Poller, *netpoll.PollAttachment) {
	if !pauseOK || reflect.TypeOf(gc) != gnetConnType {
		return nil, nil
	}
	base := reflect.ValueOf(gc).UnsafePointer()
	loop := *(*unsafe.Pointer)(unsafe.Add(base, loopOffset))
	if loop == nil {
		return nil, nil
	}
	poller := *(**netpoll.Poller)(unsafe.Add(loop, pollerOffset))
	pa := (*netpoll.PollAttachment)(unsafe.Add(base, attachOffset))
	return poller, pa
}

// takeOutbound moves the output gnet still holds for gc into a new slice and
// empties gnet's buffer (event loop only), so that gnet's close writes nothing more
// and the engine can write it after all, in order, to a duplicate of the fd
// (detach.go). ok is false when gnet's layout is not the one expected.
func takeOutbound(gc gnet.Conn) (b []byte, ok bool) {
	if !outboundOK || reflect.TypeOf(gc) != gnetConnType {
		return nil, false
	}
	mb := (*elastic.Buffer)(unsafe.Add(reflect.ValueOf(gc).UnsafePointer(), outboundOffset))
	b = make([]byte, mb.Buffered())
	n, _ := mb.Read(b)
	return b[:n], mb.IsEmpty()
}

// pauseRead stops reading c's socket (event loop only). When gnet holds unsent
// output, the fd stays in the poller for writing only (pausedWrite), so that gnet
// goes on flushing: a client that sends without reading the answer (an upload to
// a handler that echoes it) must not make the engine buffer its input without
// bound. gnet puts read interest back itself once its output drained (ModRead);
// the next read event then finds the connection paused and clears the flag
// (Engine.OnTraffic), and the limit applies again.
func (c *conn) pauseRead() {
	if c.paused {
		return
	}
	p, pa := pollHandles(c.gc)
	if p == nil {
		return
	}
	if p.Delete(c.gc.Fd()) != nil {
		return
	}
	c.paused = true
	if c.gc.OutboundBuffered() > 0 {
		if p.AddWrite(pa, false) == nil {
			c.pausedWrite = true
			return
		}
		// Not in the poller at all: put it back as it was.
		c.resumeRead()
	}
}

// resumeRead puts c's socket back in the poller (event loop only), with write
// interest too when output is pending.
func (c *conn) resumeRead() {
	if !c.paused {
		return
	}
	inPoller := c.pausedWrite
	c.paused, c.pausedWrite = false, false
	p, pa := pollHandles(c.gc)
	switch {
	case inPoller && c.gc.OutboundBuffered() > 0:
		_ = p.ModReadWrite(pa, false)
	case inPoller:
		_ = p.ModRead(pa, false)
	case c.gc.OutboundBuffered() > 0:
		_ = p.AddReadWrite(pa, false)
	default:
		_ = p.AddRead(pa, false)
	}
}

// readEvent is called when gnet reports c readable: a connection paused for
// writing only had its read interest put back by gnet (see pauseRead).
func (c *conn) readEvent() {
	if c.paused && c.pausedWrite {
		c.paused, c.pausedWrite = false, false
	}
}
