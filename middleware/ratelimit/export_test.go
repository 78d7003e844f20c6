package ratelimit

import "time"

// WithClock returns cfg with a fake clock, for tests.
func WithClock(cfg Config, now func() time.Time) Config {
	cfg.now = now
	return cfg
}
