package h2

import "iter"

// streamSlots is the size of a connection's direct-mapped stream table: a
// client's streams have consecutive odd identifiers (RFC 9113 §5.1.1), so the
// streams in flight of any client that keeps fewer than this many open at once
// each have a slot of their own.
const streamSlots = 64

// slottedStreamTable is a connection's open and half-closed streams by identifier
// (owned by the event loop). A stream sits in slot (id/2) mod streamSlots, or,
// when another holds that slot, in a map. With many streams in flight (handlers
// on workers, h2load -m32) a Go map of them grows past its small form, and its
// insert, lookup and delete cost about 400 instructions a request more than
// these slots.
type slottedStreamTable struct {
	slots *[streamSlots]*stream // made on the first insert
	extra map[uint32]*stream    // streams whose slot was taken
	n     int
}

func (t *slottedStreamTable) slot(id uint32) **stream {
	return &t.slots[(id>>1)%streamSlots]
}

// get returns the open stream id, or nil.
func (t *slottedStreamTable) get(id uint32) *stream {
	if t.slots != nil {
		if s := *t.slot(id); s != nil && s.id == id {
			return s
		}
	}
	if t.extra != nil {
		return t.extra[id]
	}
	return nil
}

// put adds s, which is not in the table.
func (t *slottedStreamTable) put(s *stream) {
	if t.slots == nil {
		t.slots = new([streamSlots]*stream)
	}
	t.n++
	if p := t.slot(s.id); *p == nil {
		*p = s
		return
	}
	if t.extra == nil {
		t.extra = make(map[uint32]*stream)
	}
	t.extra[s.id] = s
}

// del removes stream id, if it is in the table.
func (t *slottedStreamTable) del(id uint32) {
	if t.slots != nil {
		if p := t.slot(id); *p != nil && (*p).id == id {
			*p = nil
			t.n--
			return
		}
	}
	if _, ok := t.extra[id]; ok {
		delete(t.extra, id)
		t.n--
	}
}

// len returns the number of streams in the table.
func (t *slottedStreamTable) len() int { return t.n }

// all yields every stream, in no particular order; the loop body may remove the
// stream it is given (del).
func (t *slottedStreamTable) all() iter.Seq[*stream] {
	return func(yield func(*stream) bool) {
		if t.slots != nil {
			for _, s := range t.slots {
				if s != nil && !yield(s) {
					return
				}
			}
		}
		for _, s := range t.extra {
			if !yield(s) {
				return
			}
		}
	}
}
