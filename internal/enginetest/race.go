//go:build race

package enginetest

// raceEnabled: the race detector limits a process to 8,128 goroutines, which
// an engine with a goroutine per connection (std) passes at 10,000
// connections.
const raceEnabled = true
