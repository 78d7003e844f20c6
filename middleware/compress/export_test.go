package compress

// SetRegistered replaces the registered Encoders (for tests that register).
func SetRegistered(encs []Encoder) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	registry.encs = encs
}
