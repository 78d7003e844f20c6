//go:build linux && race

package epoll

import "testing"

// In race builds a loop-only method called from another goroutine panics.
func TestOwnerChecked(t *testing.T) {
	var o owner
	o.claim()
	o.check("on the owner") // no panic
	done := make(chan any)
	go func() {
		defer func() { done <- recover() }()
		o.check("Conn.Write")
	}()
	if r := <-done; r == nil {
		t.Fatal("a loop-only call from another goroutine went unnoticed")
	}
}
