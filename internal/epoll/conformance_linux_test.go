package epoll

import (
	"testing"

	"github.com/celeris-dev/celeris/internal/enginetest"
)

// TestConformance runs the engine conformance suite on the epoll engine, with
// two loops (connections cross from the accepting loop to the other).
func TestConformance(t *testing.T) {
	enginetest.Run(t, conformanceEngine(false))
}

// TestConformanceDirect runs the suite with handlers in place (Config.Direct):
// HTTP/1.1 batches run on the loop and move to a worker when they wait.
func TestConformanceDirect(t *testing.T) {
	enginetest.Run(t, conformanceEngine(true))
}

// conformanceEngine builds the engines the conformance suite runs on.
func conformanceEngine(direct bool) enginetest.Factory {
	return func(o enginetest.Options) enginetest.Engine {
		return New(Config{
			Addr:              o.Addr,
			Loops:             2,
			Protocols:         o.Protocols,
			ReadHeaderTimeout: o.ReadHeaderTimeout,
			IdleTimeout:       o.IdleTimeout,
			MaxBufferedInput:  o.MaxBufferedInput,
			Direct:            direct,
		})
	}
}

// TestManyIdleConnections holds 10,000 idle connections at once
// (enginetest.RunManyIdle).
func TestManyIdleConnections(t *testing.T) {
	enginetest.RunManyIdle(t, conformanceEngine(false), 10000)
}
