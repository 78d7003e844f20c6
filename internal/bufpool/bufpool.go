// Package bufpool pools large byte buffers by size class, for buffers that a
// connection needs only while a message passes through it (a WebSocket message,
// an output batch): returned as soon as it is done with, a buffer serves the next
// connection that needs one, instead of staying with an idle connection, and a
// steady stream of large messages allocates nothing.
//
// Classes are the powers of two from MinSize to MaxSize, each with Slack bytes
// more: room for a frame header in front of a power-of-two payload (a 16 KiB
// WebSocket message and its 16 KiB echo frame share a class, instead of the frame
// taking a 32 KiB buffer). Get returns a buffer of at least the size asked for (a
// fresh one above the largest class); Put files a buffer under the largest class
// its capacity covers and drops it below the smallest or above twice the largest. The classes are sync.Pools: what is not reused is released by the
// garbage collector (after two cycles), so the pools hold nothing for long once
// traffic stops.
package bufpool

import (
	"math/bits"
	"sync"
	"unsafe"
)

const (
	minShift = 12
	maxShift = 20
	// MinSize is the smallest class (4 KiB, plus Slack); smaller buffers are not
	// pooled.
	MinSize = 1<<minShift + Slack
	// MaxSize is the largest class (1 MiB, plus Slack).
	MaxSize = 1<<maxShift + Slack
	// Slack is what each class holds beyond its power of two.
	Slack = 64
)

// The pools hold the buffers' first bytes (unsafe.Pointer, which an interface
// holds without allocating); the class gives the capacity back.
var pools [maxShift - minShift + 1]sync.Pool

// class is the index of the smallest class of at least n bytes (n <= MaxSize).
func class(n int) int {
	if n <= MinSize {
		return 0
	}
	return bits.Len(uint(n-Slack-1)) - minShift
}

// size is the capacity of class i.
func size(i int) int { return 1<<(i+minShift) + Slack }

// Get returns an empty buffer with a capacity of at least n.
func Get(n int) []byte {
	if n > MaxSize {
		return make([]byte, 0, n)
	}
	i := class(n)
	if p, _ := pools[i].Get().(unsafe.Pointer); p != nil {
		return unsafe.Slice((*byte)(p), size(i))[:0]
	}
	return make([]byte, 0, size(i))
}

// Put gives b back for reuse; the caller must not use it (nor any slice of it)
// afterwards.
func Put(b []byte) {
	c := cap(b)
	if c < MinSize || c > 2*MaxSize {
		return
	}
	i := bits.Len(uint(c-Slack)) - 1 - minShift // the largest class c covers
	if i > maxShift-minShift {
		i = maxShift - minShift
	}
	pools[i].Put(unsafe.Pointer(unsafe.SliceData(b[:1])))
}
