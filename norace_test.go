//go:build !race

package celeris

const raceEnabled = false
