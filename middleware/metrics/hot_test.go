package metrics

import (
	"fmt"
	"testing"
	"time"
)

// count sums a series' requests over the shards.
func (m *Metrics) count(method, route string, status int) uint64 {
	k := seriesKey{route: route, method: uint8(methodIndex(method)), status: uint8(statusSlot(status))}
	i, ok := m.series.Load().idx[k]
	if !ok {
		return 0
	}
	var n uint64
	for s := range m.shards {
		n += m.shards[s].chunks[i/chunkSize].Load()[i%chunkSize].Load()
	}
	return n
}

// TestHotCacheCollisions counts series that share a slot of the hot cache, taken
// in turns so that each evicts the other, and more series than the cache has
// slots: every request lands on its own series.
func TestHotCacheCollisions(t *testing.T) {
	type series struct {
		method, route string
		status        int
	}
	slot := func(s series) uint {
		return hotHash(seriesKey{route: s.route, method: uint8(methodIndex(s.method)), status: uint8(statusSlot(s.status))})
	}
	all := []series{{method: "GET", route: "/a", status: 200}}
	for i := 0; len(all) < 4; i++ { // three more in the first one's slot
		if s := (series{method: "GET", route: fmt.Sprintf("/r%d", i), status: 200}); slot(s) == slot(all[0]) {
			all = append(all, s)
		}
	}
	for i := range 2 * hotSlots {
		all = append(all, series{method: "POST", route: fmt.Sprintf("/many/%d", i), status: 404})
	}
	m := New(Config{})
	const rounds = 5
	for range rounds {
		for j, s := range all {
			for range j%3 + 1 {
				m.ObserveRoute(s.method, s.route, s.status, time.Millisecond)
			}
		}
	}
	for j, s := range all {
		if got, want := m.count(s.method, s.route, s.status), uint64(rounds*(j%3+1)); got != want {
			t.Errorf("series %+v: %d requests, want %d", s, got, want)
		}
	}
	if a := testing.AllocsPerRun(100, func() { m.ObserveRoute("GET", "/a", 200, time.Millisecond) }); a != 0 {
		t.Errorf("ObserveRoute of a known series: %v allocs", a)
	}
}
