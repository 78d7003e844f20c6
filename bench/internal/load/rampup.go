package load

import (
	"fmt"
	"time"
)

// RampupConfig drives the rampup mode: start with Start clients, add Step
// every Interval until the p95 latency of the last interval exceeds P95Limit
// or MaxDuration has passed.
type RampupConfig struct {
	Start, Step int
	Interval    time.Duration
	P95Limit    time.Duration
	MaxDuration time.Duration
	// MaxClients stops the ramp once reached (0: no limit).
	MaxClients int
}

// Point is one interval of a run: its load and what it measured.
type Point struct {
	Clients int     `json:"clients"`
	RPS     float64 `json:"rps"`
	Percentiles
	Counts
}

// Sample is what the controller learns at the end of one interval.
type Sample struct {
	Clients int
	Elapsed time.Duration
	Counts
	Percentiles
}

// Controller decides the client count interval by interval. It is pure (no
// clock, no sockets) so its rules are unit-tested directly.
type Controller struct {
	cfg     RampupConfig
	elapsed time.Duration
	stalled time.Duration // time since the last interval with a 2xx answer
	best    int           // index in series of the best interval within the limit, -1 if none
	bestAny int           // index of the best interval overall, -1 if none
	series  []Point
	reason  string
}

// NewController returns a controller for cfg.
func NewController(cfg RampupConfig) *Controller {
	return &Controller{cfg: cfg, best: -1, bestAny: -1}
}

// Clients returns the client count of the first interval.
func (c *Controller) Clients() int { return c.cfg.Start }

// Observe takes the interval that just ended and returns the client count
// for the next one, or stop (with StopReason set).
func (c *Controller) Observe(s Sample) (next int, stop bool) {
	c.elapsed += s.Elapsed
	pt := Point{Clients: s.Clients, Percentiles: s.Percentiles, Counts: s.Counts}
	if s.Elapsed > 0 {
		pt.RPS = float64(s.OK) / s.Elapsed.Seconds()
	}
	c.series = append(c.series, pt)
	i := len(c.series) - 1
	if s.OK > 0 {
		c.stalled = 0
		if c.bestAny < 0 || pt.RPS > c.series[c.bestAny].RPS {
			c.bestAny = i
		}
		if s.P95 <= c.cfg.P95Limit && (c.best < 0 || pt.RPS > c.series[c.best].RPS) {
			c.best = i
		}
	} else {
		c.stalled += s.Elapsed
	}
	switch {
	case s.OK > 0 && s.P95 > c.cfg.P95Limit:
		c.reason = fmt.Sprintf("p95 %v exceeded the %v limit at %d clients", s.P95.Round(time.Microsecond), c.cfg.P95Limit, s.Clients)
	case s.OK == 0 && c.stalled >= c.cfg.P95Limit:
		// Nothing answered for longer than the limit: every request in flight is over it.
		c.reason = fmt.Sprintf("no 2xx response for %v at %d clients", c.stalled, s.Clients)
	case c.elapsed >= c.cfg.MaxDuration:
		c.reason = fmt.Sprintf("max duration %v reached at %d clients", c.cfg.MaxDuration, s.Clients)
	case c.cfg.MaxClients > 0 && s.Clients >= c.cfg.MaxClients:
		c.reason = fmt.Sprintf("max clients %d reached", c.cfg.MaxClients)
	default:
		next = s.Clients + c.cfg.Step
		if c.cfg.MaxClients > 0 {
			next = min(next, c.cfg.MaxClients)
		}
		return next, false
	}
	return s.Clients, true
}

// Best returns the interval with the highest RPS among those whose p95 was
// within the limit (or, if none was, the highest overall); ok is false when
// no interval had a 2xx answer.
func (c *Controller) Best() (pt Point, ok bool) {
	i := c.best
	if i < 0 {
		i = c.bestAny
	}
	if i < 0 {
		return Point{}, false
	}
	return c.series[i], true
}

// Series returns every interval observed so far.
func (c *Controller) Series() []Point { return c.series }

// StopReason says why Observe stopped the ramp ("" while it runs).
func (c *Controller) StopReason() string { return c.reason }
