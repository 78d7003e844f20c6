package h1

import (
	"github.com/celeris-dev/celeris/internal/directrun"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// enqueue runs a complete, routed request inline or adds it to the batch.
func (cn *Conn) enqueue(ex *exchange) {
	ex.msg.Body = ex.body
	if len(ex.body) > 0 || ex.chunked {
		ex.msg.ContentLength = int64(len(ex.body))
	}
	if ex.draining() {
		ex.keepAlive = false
	}
	if ex.inline && len(cn.batch) == 0 && !cn.busy {
		ex.out = &cn.inline
		ex.serve(cn.cfg.Handler)
		if ex.msg.MoveToWorker {
			// The handler's answer would wait for the client (a large body, a
			// file: httpmsg.LoopWriter): it is written on a worker, as a batch
			// of its own, and the pipelined requests after it wait their turn.
			ex.inline, ex.out = false, nil
			cn.batch = append(cn.batch, ex)
			if !ex.keepAlive {
				cn.closing = true
			}
			cn.submit()
			return
		}
		cn.inline = httpmsg.WriteOwned(cn.c, cn.inline)
		if !ex.keepAlive {
			cn.closing = true
			cn.c.Close()
		}
		cn.put(ex)
		return
	}
	cn.batch = append(cn.batch, ex)
	if !ex.keepAlive {
		cn.closing = true // nothing after a request that closes the connection
	}
	max := cn.cfg.MaxBatch
	if max <= 0 {
		max = 16
	}
	if len(cn.batch) >= max && !cn.busy {
		cn.submit()
	}
}

// submit hands the batch to a worker, or runs it directly where the engine can
// (httpmsg.DirectRunner): on the loop's goroutine once OnData returned, as on a
// worker; the engine moves the loop off that goroutine when the batch wakes the
// loop before its final hand-off (output handed over early, an interim answer, a
// hijack). A batch whose body streams in needs the loop from the start: it goes
// to the pool.
func (cn *Conn) submit() {
	cn.busy = true
	cn.direct = cn.dr != nil && cn.streamEx == nil && (!cn.cfg.LearnInPlace || cn.batchInPlace()) &&
		cn.dr.RunDirect(&cn.task)
	if cn.direct {
		return
	}
	if cn.cfg.Pool == nil || !cn.cfg.Pool.Submit(&cn.task) {
		// No worker available: refuse rather than block the loop.
		for _, ex := range cn.batch {
			ex.out = &cn.inline
			ex.keepAlive = false
			ct, body := "text/plain; charset=utf-8", []byte("server busy")
			if f := cn.cfg.RefusalBody; f != nil {
				if t, b := f(503); t != "" || b != nil {
					ct, body = t, b
				}
			}
			_ = ex.WriteResponse(503, append([]httpmsg.Field{{Name: "Content-Type", Value: ct}}, cn.refusalFields(503)...), body)
		}
		cn.c.Write(cn.inline)
		cn.inline = cn.inline[:0]
		cn.finishBatch()
		cn.closing = true
		cn.c.Close()
	}
}

// OnWake writes what the worker handed back and, when it finished, takes the
// connection back so that OnData can parse pipelined requests that waited.
func (cn *Conn) OnWake() error {
	cn.mu.Lock()
	ready, done := cn.ready, cn.done
	cn.ready, cn.done = cn.spare[:0], false
	hj := cn.hijack
	cn.hijack = nil
	cn.mu.Unlock()
	if hj != nil {
		return cn.takeHijack(hj, ready)
	}
	if len(ready) > 0 {
		// The engine may keep the worker's buffer (a large body is not copied
		// again) and give another back: that one becomes the spare.
		ready = httpmsg.WriteOwned(cn.c, ready)
	}
	if cap(ready) <= 1<<20 {
		cn.spare = ready[:0]
	} else {
		cn.spare = nil
	}
	if !done {
		return nil
	}
	closeNow := cn.finishBatch()
	if cn.switchTo != nil {
		return httpmsg.ErrUpgrade // the engine takes the new protocol (TakeSwitch)
	}
	if closeNow || cn.closing || (cn.draining.Load() && cn.cur == nil) {
		cn.closing = true
		return errCloseAfterFlush
	}
	return nil
}

// finishBatch recycles the finished batch; it reports whether a response closed
// the connection.
func (cn *Conn) finishBatch() (closeConn bool) {
	if cn.streamEx != nil {
		// The handler returned before its body was complete: the rest of the body
		// cannot be told apart from the next request without reading it; close.
		cn.streamEx.pipe.abort(ErrBodyAborted)
		cn.streamEx = nil
		closeConn = true
	}
	for i, ex := range cn.batch {
		if !ex.keepAlive {
			closeConn = true
		}
		cn.put(ex)
		cn.batch[i] = nil
	}
	cn.batch = cn.batch[:0]
	cn.busy = false
	return closeConn
}

// batchInPlace reports whether every request of the batch may run in place:
// no route of theirs was seen to wait (Request.InPlace).
func (cn *Conn) batchInPlace() bool {
	for _, ex := range cn.batch {
		if !ex.msg.InPlace.InPlace() {
			return false
		}
	}
	return true
}

// handOff moves bytes produced on a worker to the loop. done marks the batch finished.
// A direct batch's final hand-off wakes nobody: the engine runs OnWake once the
// batch returns (httpmsg.DirectRunner); any other hand-off wakes the loop, which
// detaches a direct batch, so that the bytes go out now and waitOutput waits for
// a loop that runs.
func (cn *Conn) handOff(b *[]byte, done bool) error {
	direct := cn.direct // read before the hand-off: the loop may submit again after it
	cn.mu.Lock()
	if cn.closed {
		// Nobody will write these bytes: drop them, and tell a streaming handler.
		*b = (*b)[:0]
		cn.mu.Unlock()
		return ErrConnClosed
	}
	if len(cn.ready) == 0 {
		cn.ready, *b = *b, cn.ready[:0]
	} else {
		cn.ready = append(cn.ready, *b...)
		*b = (*b)[:0]
	}
	if done {
		if cap(*b) > 1<<20 {
			*b = nil // do not pin a large buffer to the connection
		}
		cn.done = true
	}
	cn.mu.Unlock()
	if !done {
		cn.c.Wake()
		cn.waitOutput()
	} else if !direct {
		cn.c.Wake()
	}
	return nil
}

// handOffEarly: a worker hands a batch's output over before the batch ends once it
// holds this much.
const handOffEarly = 256 << 10

// batchTask runs a connection's batch on a worker, in order.
type batchTask struct {
	conn *Conn
	buf  []byte // owned by the worker while it runs
}

// Moved records that the loop moved off the batch run in place
// (httpmsg.MoveObserver): its routes' handlers wait (Request.InPlace), and
// their requests go to workers from now on. The batch is this run's until its
// final hand-off, and the loop's new owner starts only after this returns.
func (t *batchTask) Moved() {
	for _, ex := range t.conn.batch {
		ex.msg.InPlace.Moved()
	}
}

// Run serves each exchange of the batch and hands the bytes back once.
func (t *batchTask) Run() {
	cn := t.conn
	g, n := cn.cfg.Active, int64(len(cn.batch))
	if g != nil {
		g.Add(n)
	}
	learn := cn.direct && cn.cfg.LearnInPlace
	var t0 int64
	if learn {
		t0 = directrun.Ticks()
	}
	for i, ex := range cn.batch {
		ex.out = &t.buf
		ex.msg.Counted = g != nil
		ex.serve(cn.cfg.Handler)
		if learn {
			// Timed in place, for the route's record (Request.InPlace), from
			// the previous request's end: one clock read per request.
			t1 := directrun.Ticks()
			ex.msg.InPlace.Ran(t0, t1, cn.cfg.SlowTicks)
			t0 = t1
		}
		if !ex.keepAlive {
			break
		}
		if len(t.buf) > handOffEarly && i < len(cn.batch)-1 {
			// Large answers: pass them on (and wait while the client is slow)
			// instead of holding a whole batch of them.
			_ = cn.handOff(&t.buf, false)
		}
	}
	if g != nil {
		g.Add(-n) // before the answers go out: a client that has them sees it
	}
	// After this hand-off the loop may submit this task again at once: Run must not
	// touch t afterwards.
	_ = cn.handOff(&t.buf, true)
}
