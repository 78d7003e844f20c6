package h1

// newExchange takes an exchange from the free list and fills it from the parsed head.
func (cn *Conn) newExchange(head []byte, r *Request) *exchange {
	var ex *exchange
	if n := len(cn.free); n > 0 {
		ex = cn.free[n-1]
		cn.free[n-1] = nil
		cn.free = cn.free[:n-1]
		cn.kept -= ex.keptBytes()
	} else {
		ex = &exchange{conn: cn}
	}
	ex.fill(head, r)
	return ex
}

// put returns ex to the free list (bounded), dropping large buffers.
func (cn *Conn) put(ex *exchange) {
	ex.release()
	if len(cn.free) >= maxSpares {
		// Only the top of the free list keeps a Context for its next request (a
		// keep-alive client without pipelining reuses one exchange): after a
		// pipelined burst an idle connection holds maxSpares Contexts, not one per
		// free exchange.
		if sp := ex.msg.Spare; sp != nil {
			ex.msg.Spare = nil
			sp.Recycle()
		}
	}
	if len(cn.free) >= maxFree {
		return
	}
	// An idle keep-alive connection must not pin much memory: the buffers its free
	// exchanges keep are bounded in total (a burst of large pipelined bodies would
	// otherwise stay allocated for as long as the client keeps the connection).
	k := ex.keptBytes()
	if cn.kept+k > maxKeptBytes {
		ex.dropBuffers()
		k = 0
	}
	cn.kept += k
	cn.free = append(cn.free, ex)
}

// maxKeptBytes bounds the buffer capacity a connection's free exchanges keep.
const maxKeptBytes = 64 << 10

func (cn *Conn) release() {
	for _, ex := range cn.free {
		if sp := ex.msg.Spare; sp != nil {
			ex.msg.Spare = nil
			sp.Recycle() // the handler's state goes back to its pool, not to the GC
		}
	}
	cn.free, cn.kept = nil, 0
	cn.batch = nil
	cn.cur = nil
	cn.inline = nil
}

// maxSpares bounds the free exchanges that keep their request's Context
// (httpmsg.Request.Spare) for the next request: about 1 KB each.
const maxSpares = 2

// maxFree bounds the per-connection free list of exchanges: a full pipelined batch
// (MaxBatch, 16 by default) plus the ones being read, reused without allocating.
const maxFree = 32
