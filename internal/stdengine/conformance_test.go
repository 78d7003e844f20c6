package stdengine

import (
	"testing"

	"github.com/celeris-dev/celeris/internal/enginetest"
)

// TestConformance runs the engine conformance suite on the std engine.
func TestConformance(t *testing.T) {
	enginetest.Run(t, newConformanceEngine)
}

// newConformanceEngine builds the engine the conformance suite runs on.
var newConformanceEngine enginetest.Factory = func(o enginetest.Options) enginetest.Engine {
	return New(Config{
		Addr:              o.Addr,
		Protocols:         o.Protocols,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxBufferedInput:  o.MaxBufferedInput,
	})
}

// TestManyIdleConnections holds 10,000 idle connections at once
// (enginetest.RunManyIdle).
func TestManyIdleConnections(t *testing.T) { enginetest.RunManyIdle(t, newConformanceEngine, 10000) }
