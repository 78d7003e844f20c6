package stdengine

import (
	"testing"

	"github.com/celeris-dev/celeris/internal/enginetest"
)

// TestConformance runs the engine conformance suite on the std engine.
func TestConformance(t *testing.T) {
	enginetest.Run(t, func(o enginetest.Options) enginetest.Engine {
		return New(Config{
			Addr:              o.Addr,
			Protocols:         o.Protocols,
			ReadHeaderTimeout: o.ReadHeaderTimeout,
			IdleTimeout:       o.IdleTimeout,
			MaxBufferedInput:  o.MaxBufferedInput,
		})
	})
}
