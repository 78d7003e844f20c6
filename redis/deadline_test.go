package celerisredis

import (
	"context"
	"errors"
	"testing"
	"time"
)

// do bounds a call by the context's deadline, or by its timeout when the
// context has none or a later one; a call that ignores its context (a client
// without ContextTimeoutEnabled) is left behind at the deadline, one that
// honours it is called directly.
func TestDo(t *testing.T) {
	stuck := func(release <-chan struct{}) func(context.Context) (int, error) {
		return func(context.Context) (int, error) { <-release; return 1, nil }
	}
	honours := func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }
	quick := func(context.Context) (int, error) { return 7, nil }
	release := make(chan struct{})
	defer close(release)
	bg := func() context.Context { return context.Background() }
	within := func(d time.Duration) func() context.Context {
		return func() context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), d)
			t.Cleanup(cancel)
			return ctx
		}
	}
	for _, tt := range []struct {
		name    string
		ctx     func() context.Context
		d       deadline
		fn      func(context.Context) (int, error)
		want    int
		timeout bool
		min     time.Duration
		max     time.Duration
	}{
		{name: "quick", ctx: bg, d: deadline{timeout: time.Second}, fn: quick, want: 7, max: 50 * time.Millisecond},
		{name: "stuck, no deadline", ctx: bg, d: deadline{timeout: 100 * time.Millisecond}, fn: stuck(release),
			timeout: true, min: 100 * time.Millisecond, max: 400 * time.Millisecond},
		{name: "stuck, request deadline first", ctx: within(50 * time.Millisecond), d: deadline{timeout: time.Second}, fn: stuck(release),
			timeout: true, min: 40 * time.Millisecond, max: 400 * time.Millisecond},
		{name: "stuck, timeout before a later deadline", ctx: within(time.Hour), d: deadline{timeout: 100 * time.Millisecond}, fn: stuck(release),
			timeout: true, min: 100 * time.Millisecond, max: 400 * time.Millisecond},
		{name: "direct, honours the context", ctx: bg, d: deadline{timeout: 100 * time.Millisecond, direct: true}, fn: honours,
			timeout: true, min: 100 * time.Millisecond, max: 400 * time.Millisecond},
	} {
		ctx := tt.ctx()
		start := time.Now()
		got, err := do(ctx, tt.d, tt.fn)
		el := time.Since(start)
		if tt.timeout != errors.Is(err, ErrTimeout) || tt.timeout && !errors.Is(err, context.DeadlineExceeded) ||
			got != tt.want || el < tt.min || el > tt.max {
			t.Errorf("%s: %d %v after %v", tt.name, got, err, el)
		}
	}
}
