package session

import "time"

// WithClock returns cfg with a fake clock, for tests.
func WithClock(cfg Config, now func() time.Time) Config {
	cfg.now = now
	return cfg
}

// SetMemoryClock sets a MemoryStore's clock, for tests.
func SetMemoryClock(s *MemoryStore, now func() time.Time) { s.now = now }

// Seal and Open expose the cookie sealer, for tests.
func Seal(keys [][]byte, name string, plaintext []byte) string {
	s, err := newSealer(keys)
	if err != nil {
		panic(err)
	}
	return s.seal(name, plaintext)
}

func Open(keys [][]byte, name, value string) ([]byte, bool, error) {
	s, err := newSealer(keys)
	if err != nil {
		panic(err)
	}
	return s.open(name, value)
}
