//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package celeris

import "github.com/celeris-dev/celeris/internal/engine"

var _ fileEngine = (*engine.Engine)(nil)
