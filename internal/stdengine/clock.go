package stdengine

import "time"

// clockBase is the engine's time origin. A connection's times (when it began,
// was last active or made progress, its read deadline, the writer's last write)
// are nanoseconds since clockBase on the monotonic clock: monoNow costs one clock
// read where time.Now costs two (the wall clock and the monotonic one), and the
// owner reads the clock once per wait, so once per request. Wall-clock steps do
// not move these times.
var clockBase = time.Now()

// monoNow is the time now, in nanoseconds since clockBase (always > 0).
func monoNow() int64 { return int64(time.Since(clockBase)) + 1 }

// monoTime is the time.Time of a monoNow reading, for SetReadDeadline; it keeps
// clockBase's monotonic reading, which deadlines are measured with.
func monoTime(ns int64) time.Time { return clockBase.Add(time.Duration(ns - 1)) }
