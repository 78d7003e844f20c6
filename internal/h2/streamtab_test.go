package h2

import (
	"slices"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// TestSlottedStreamTable: streams in their slot and in the map when the slot is
// taken (identifiers streamSlots*2 apart share one), found, removed, counted and
// listed, removal while listing included.
func TestSlottedStreamTable(t *testing.T) {
	var tab slottedStreamTable
	mk := func(id uint32) *stream { return &stream{id: id} }
	if tab.get(1) != nil || tab.len() != 0 {
		t.Fatal("empty table finds a stream")
	}
	ids := []uint32{1, 3, 1 + 2*streamSlots, 5, 1 + 4*streamSlots, 127}
	for _, id := range ids {
		tab.put(mk(id))
	}
	if tab.len() != len(ids) {
		t.Fatalf("len %d, want %d", tab.len(), len(ids))
	}
	for _, id := range ids {
		if s := tab.get(id); s == nil || s.id != id {
			t.Fatalf("get(%d) = %v", id, s)
		}
	}
	for _, id := range []uint32{7, 1 + 6*streamSlots, 0} {
		if tab.get(id) != nil {
			t.Fatalf("get(%d) finds a stream that is not there", id)
		}
	}
	// Removing the slot's holder leaves the map's streams of that slot found.
	tab.del(1)
	tab.del(1) // twice: no effect
	if tab.get(1) != nil || tab.get(1+2*streamSlots) == nil || tab.len() != len(ids)-1 {
		t.Fatalf("after del(1): get(1) %v, len %d", tab.get(1), tab.len())
	}
	// A stream put again takes the free slot.
	tab.put(mk(1 + 6*streamSlots))
	if tab.get(1+6*streamSlots) == nil {
		t.Fatal("stream put in a freed slot not found")
	}
	var seen []uint32
	for s := range tab.all() {
		seen = append(seen, s.id)
		tab.del(s.id)
	}
	slices.Sort(seen)
	want := []uint32{3, 5, 127, 1 + 2*streamSlots, 1 + 4*streamSlots, 1 + 6*streamSlots}
	slices.Sort(want)
	if !slices.Equal(seen, want) || tab.len() != 0 {
		t.Fatalf("all() gave %v (len after %d), want %v", seen, tab.len(), want)
	}
	for range tab.all() {
		t.Fatal("emptied table lists a stream")
	}
}

// TestFieldBufAdd: copied fields keep their names and values across several
// adds that grow the buffer, and owe nothing to the caller's strings.
func TestFieldBufAdd(t *testing.T) {
	var b fieldBuf
	var want []httpmsg.Field
	src := []byte("x-name-0")
	for i := range 40 {
		src[len(src)-1] = byte('a' + i%26)
		fields := []httpmsg.Field{
			{Name: string(src), Value: strings.Repeat("v", i*7)},
			{Name: "content-type", Value: ""},
			{Name: "", Value: "empty-name"},
		}
		want = append(want, fields...)
		b.add(fields)
	}
	if !slices.Equal(b.fields, want) {
		t.Fatalf("fields differ:\n got %q\nwant %q", b.fields, want)
	}
	b = b.reset()
	if len(b.fields) != 0 || len(b.buf) != 0 {
		t.Fatal("reset left fields or bytes")
	}
	b.add([]httpmsg.Field{{Name: "a", Value: "b"}})
	if len(b.fields) != 1 || b.fields[0] != (httpmsg.Field{Name: "a", Value: "b"}) {
		t.Fatalf("after reset: %q", b.fields)
	}
}
