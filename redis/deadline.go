package celerisredis

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// DefaultTimeout bounds each call a store makes to Redis whose context has no
// earlier deadline, so that a stalled Redis holds a request for at most this
// long even without a timeout middleware. A store's WithTimeout changes it.
const DefaultTimeout = time.Second

// ErrTimeout is returned (wrapping context.DeadlineExceeded or the context's
// cancellation) when Redis did not answer before the call's deadline.
var ErrTimeout = errors.New("celerisredis: redis did not answer in time")

// deadline bounds a store's calls to Redis by the request's context.
//
// go-redis bounds its socket reads and writes by the context's deadline only
// with ContextTimeoutEnabled (otherwise by ReadTimeout and WriteTimeout, 3 s each,
// times MaxRetries): a request under a 1 s timeout would wait 5 s or more on a
// stalled Redis. A client with ContextTimeoutEnabled is called directly. Any other
// is called on a goroutine of its own, and the store returns at the context's
// deadline while the call ends on the client's own timeouts; that costs a
// goroutine and a channel per call, which ContextTimeoutEnabled saves.
type deadline struct {
	timeout time.Duration // per call when the context has no earlier deadline; 0: none
	direct  bool          // the client bounds its I/O by the context (ContextTimeoutEnabled)
}

func newDeadline(client goredis.UniversalClient) deadline {
	d := deadline{timeout: DefaultTimeout}
	switch c := client.(type) {
	case *goredis.Client:
		d.direct = c.Options().ContextTimeoutEnabled
	case *goredis.ClusterClient:
		d.direct = c.Options().ContextTimeoutEnabled
	case *goredis.Ring:
		d.direct = c.Options().ContextTimeoutEnabled
	}
	return d
}

// do runs fn with ctx, bounded by d.timeout when ctx has no earlier deadline,
// and returns by ctx's deadline or cancellation whatever the client does.
func do[T any](ctx context.Context, d deadline, fn func(ctx context.Context) (T, error)) (T, error) {
	if d.timeout > 0 {
		if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > d.timeout {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d.timeout)
			defer cancel()
		}
	}
	if d.direct || ctx.Done() == nil {
		v, err := fn(ctx)
		if err != nil && ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", ErrTimeout, err)
		}
		return v, err
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1) // the call may end after do returned: it must not block
	go func() {
		v, err := fn(ctx)
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("%w: %w", ErrTimeout, ctx.Err())
	}
}
