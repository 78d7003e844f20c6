package celeris

// Inline routes whose answer would wait.
//
// An Inline route's handler runs on its connection's event loop, which must
// never wait for a client. A response that would have to wait past the
// output bound (Config) is therefore not written there: a Blob body over
// blobCopyMax, a file (File, FileFS, Attachment, Inline, the static
// middleware) over fileInMemory. The Context records it instead (moved), with
// the status, fields and length that middleware (a logger) sees as written,
// and returns to the handler at once. When the handler returned, Serve leaves
// the Context on the request and sets Request.MoveToWorker; the protocol moves
// the exchange to a worker as it dispatches a route that is not inline
// (httpmsg.LoopWriter: HTTP/1.1 as a batch, the pipelined requests after it
// waiting their turn; HTTP/2 by moving the stream's handler to a worker) and
// calls Serve again there, which writes the recorded response through the
// protocol's SizedWriter, waiting on the bound like any worker's (finishMoved).
//
// Streamed writes (StreamWriter, SSE) cannot move in the middle of a handler:
// an inline route queues at most InlineStreamMax bytes of them, and the Write
// that would pass it fails with ErrInlineOutput and breaks the response off.

import (
	"errors"
	"io"
	"io/fs"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// InlineStreamMax is the most body bytes a streamed response (Stream,
// StreamLength, SSE) of an Inline route may write: its handler runs on the
// event loop, which cannot wait for the client, so what it writes is queued
// whole. The Write that would pass it fails with ErrInlineOutput. A complete
// body (Blob, String, JSON) and a file are not limited: they are sent from a
// worker (see Route.Inline).
const InlineStreamMax = 512 << 10

// moved is a response an inline handler recorded for a worker to write
// (tMoved). Its status and fields are the Context's.
type moved struct {
	// body is a Blob's body, borrowed from the handler until the response is
	// sent (the end of the second Serve); nil for a file.
	body     []byte
	file     fs.File     // the file to send, owned: closed at reset
	ranges   []byteRange // the file's ranges, in order
	heads    []string    // multipart part heads, one per range; nil for one range
	boundary string      // multipart boundary; "" for one range
	length   int64       // the body's exact length (Content-Length)
}

// movedContext is a Context whose response waits for a worker: Serve leaves it
// in Request.Route between its two calls.
type movedContext Context

// onLoop reports whether c's handler runs on the event loop
// (httpmsg.LoopWriter).
func (c *Context) onLoop() bool {
	lw, ok := c.w.(httpmsg.LoopWriter)
	return ok && lw.OnLoop()
}

// moveBody records b as the body of an inline route's response, to be sent
// from a worker; blob set the status and length.
func (c *Context) moveBody(b []byte) {
	c.touched |= tMoved
	c.mv.body, c.mv.length = b, int64(len(b))
	c.req.MoveToWorker = true
}

// moveFile records a file response of an inline route, to be sent from a
// worker; c takes f over.
func (c *Context) moveFile(f fs.File, status int, ctype string, ranges []byteRange, heads []string, boundary string, length int64) error {
	if c.written {
		return ErrResponseWritten
	}
	checkFinalStatus(status)
	c.SetHeader("Content-Type", ctype)
	c.written, c.status, c.bytes = true, status, length
	c.touched |= tMoved
	c.mv = moved{file: f, ranges: ranges, heads: heads, boundary: boundary, length: length}
	c.req.MoveToWorker = true
	return nil
}

// closeFile closes f unless c took it over (moveFile).
func (c *Context) closeFile(f fs.File) {
	if c.touched&tMoved == 0 || c.mv.file != f {
		_ = f.Close()
	}
}

// resetMoved drops a recorded response (reset's part).
func (c *Context) resetMoved() {
	if c.mv.file != nil {
		_ = c.mv.file.Close()
	}
	c.mv = moved{}
}

var _ httpmsg.Dropper = (*movedContext)(nil)

// Drop releases a recorded response that will not be written (httpmsg.Dropper):
// its file closes and the Context goes back to the pool.
func (m *movedContext) Drop() {
	c := (*Context)(m)
	c.reset()
	c.server.ctxs.Put(c)
}

// finishMoved is Serve's second call for an inline route's recorded response,
// on a worker: it writes the response within the output bound, ends it, and
// releases the Context.
func (s *Server) finishMoved(c *Context, req *httpmsg.Request, w httpmsg.ResponseWriter) {
	req.MoveToWorker = false
	c.w = w
	if !req.Counted {
		s.activeRequests.Add(1)
	}
	// A client that left makes the writes fail: nothing to answer, and not the
	// server's fault (a worker route's Blob to it is not logged either).
	_ = c.writeMoved()
	if !req.Counted {
		s.activeRequests.Add(-1)
	}
	req.Route = nil
	c.reset()
	s.ctxs.Put(c)
}

// writeMoved writes the recorded response with its exact length, then ends it
// (a body cut short breaks the message off: httpmsg.SizedWriter).
func (c *Context) writeMoved() error {
	sw, ok := c.w.(httpmsg.SizedWriter)
	if !ok {
		return errors.New("celeris: a moved response needs a SizedWriter")
	}
	if err := sw.WriteHeaderLength(c.status, c.header, c.mv.length); err != nil {
		return err
	}
	var err error
	if c.mv.file == nil {
		_, err = c.w.Write(c.mv.body)
	} else {
		err = writeRanges(c.w, c.mv.file, c.mv.ranges, c.mv.heads, c.mv.boundary)
	}
	if eerr := c.w.End(c.trailer); err == nil {
		err = eerr
	}
	return err
}

// writeRanges writes ranges of f to w, each after its multipart head when
// heads is not nil, and the closing boundary then; the copy goes through a
// pooled 32 KiB buffer.
func writeRanges(w io.Writer, f fs.File, ranges []byteRange, heads []string, boundary string) error {
	bp := fileBufs.Get().(*[]byte)
	defer fileBufs.Put(bp)
	for i, r := range ranges {
		if heads != nil {
			if _, err := io.WriteString(w, heads[i]); err != nil {
				return err
			}
		}
		if err := seekTo(f, r.Start); err != nil {
			return err
		}
		if _, err := io.CopyBuffer(writerOnly{w}, io.LimitReader(f, r.End-r.Start), *bp); err != nil {
			return err
		}
	}
	if heads != nil {
		if _, err := io.WriteString(w, "\r\n--"+boundary+"--\r\n"); err != nil {
			return err
		}
	}
	return nil
}

// inlineCap sets what a streamed response may write: InlineStreamMax on the
// event loop, no limit (-1) on a worker.
func (s *StreamWriter) inlineCap() {
	s.left, s.failed = -1, false
	if s.c.onLoop() {
		s.left = InlineStreamMax
	}
}

// overflow fails a Write that would pass InlineStreamMax: the first one logs
// it and breaks the response off (httpmsg.Aborter), so the client sees it
// failed, not complete.
func (s *StreamWriter) overflow() (int, error) {
	if !s.failed {
		s.failed = true
		c := s.c
		c.server.logger.Error("celeris: an Inline route streamed more than InlineStreamMax bytes; the response is broken off (remove Inline from the route)",
			"method", c.Method(), "path", c.Path(), "limit", InlineStreamMax)
		if a, ok := s.w.(httpmsg.Aborter); ok {
			a.Abort()
		}
		c.streaming = false // no End: the response stays broken off
	}
	return 0, ErrInlineOutput
}
