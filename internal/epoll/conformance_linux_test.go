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
