package jwt

import "time"

// WithClock returns cfg with a fake clock, for tests.
func WithClock(cfg Config, now func() time.Time) Config {
	cfg.now = now
	return cfg
}

// KeySetWithClock returns cfg with a fake clock, for tests.
func KeySetWithClock(cfg KeySetConfig, now func() time.Time) KeySetConfig {
	cfg.now = now
	return cfg
}

// ParseJWKSCount parses a JWK Set and counts its usable keys, for tests.
func ParseJWKSCount(b []byte) (int, error) {
	k, a, err := parseJWKS(b)
	return len(k) + len(a), err
}

// MaxAge exposes maxAge, for tests.
var MaxAge = maxAge
