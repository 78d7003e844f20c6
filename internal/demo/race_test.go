//go:build race

package demo

// raceEnabled: the race detector multiplies memory use several times, so the
// tests that bound the server's RSS skip under it (the plain runs check them).
const raceEnabled = true
