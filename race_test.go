//go:build race

package celeris

// raceEnabled: the race detector slows everything several times; timing bounds
// in tests are relaxed under it (they are checked in the plain runs).
const raceEnabled = true
