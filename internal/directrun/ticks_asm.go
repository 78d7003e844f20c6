//go:build amd64 || arm64

package directrun

// Ticks is the processor's cycle counter (amd64's time-stamp counter, arm64's
// virtual counter): a clock read in a few instructions, where time.Now costs
// about a hundred, for timing every run in place (Record). Its rate is
// measured against the monotonic clock (Calibrate).
func Ticks() int64
