package conncore

import (
	"log/slog"
	"time"
)

// Settings are the per-connection settings every engine's Config holds.
type Settings struct {
	ReadHeaderTimeout time.Duration // default 10 s
	IdleTimeout       time.Duration // default 60 s
	Logger            *slog.Logger  // default slog.Default()
	// MaxBufferedInput bounds the input received and not consumed by the
	// protocol; past it the engine stops reading. Default 512 KiB, and never
	// below PeekWindow: a whole head or frame must fit in what is read before
	// reading stops.
	MaxBufferedInput int
	// PeekWindow is the most buffered input presented in one OnData call.
	// Default 128 KiB.
	PeekWindow int
}

// WithDefaults returns s with every zero (or negative) setting at its default.
func (s Settings) WithDefaults() Settings {
	if s.ReadHeaderTimeout <= 0 {
		s.ReadHeaderTimeout = 10 * time.Second
	}
	if s.IdleTimeout <= 0 {
		s.IdleTimeout = 60 * time.Second
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if s.PeekWindow <= 0 {
		s.PeekWindow = 128 << 10
	}
	if s.MaxBufferedInput <= 0 {
		s.MaxBufferedInput = 512 << 10
	}
	s.MaxBufferedInput = max(s.MaxBufferedInput, s.PeekWindow)
	return s
}

// Timeouts are the deadlines s sets.
func (s Settings) Timeouts() Timeouts {
	return Timeouts{ReadHeader: s.ReadHeaderTimeout, Idle: s.IdleTimeout}
}
