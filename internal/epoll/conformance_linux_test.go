package epoll

import (
	"testing"

	"github.com/celeris-dev/celeris/internal/enginetest"
)

// TestConformance runs the engine conformance suite on the epoll engine, with
// two loops (connections cross from the accepting loop to the other).
func TestConformance(t *testing.T) {
	enginetest.Run(t, func(o enginetest.Options) enginetest.Engine {
		return New(Config{
			Addr:              o.Addr,
			Loops:             2,
			Protocols:         o.Protocols,
			ReadHeaderTimeout: o.ReadHeaderTimeout,
			IdleTimeout:       o.IdleTimeout,
			MaxBufferedInput:  o.MaxBufferedInput,
		})
	})
}

// TestConformanceDirect runs the suite with handlers in place (Config.Direct):
// HTTP/1.1 batches run on the loop and move to a worker when they wait.
func TestConformanceDirect(t *testing.T) {
	enginetest.Run(t, func(o enginetest.Options) enginetest.Engine {
		return New(Config{
			Addr:              o.Addr,
			Loops:             2,
			Protocols:         o.Protocols,
			ReadHeaderTimeout: o.ReadHeaderTimeout,
			IdleTimeout:       o.IdleTimeout,
			MaxBufferedInput:  o.MaxBufferedInput,
			Direct:            true,
		})
	})
}
