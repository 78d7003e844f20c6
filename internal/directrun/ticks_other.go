//go:build !amd64 && !arm64

package directrun

import "time"

var epoch = time.Now()

// Ticks is the monotonic clock in nanoseconds where no cycle counter is read
// here (ticks_asm.go).
func Ticks() int64 { return int64(time.Since(epoch)) }
