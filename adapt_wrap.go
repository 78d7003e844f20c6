package celeris

import (
	"context"
	"net/http"
)

// WrapMiddleware turns net/http middleware (func(http.Handler) http.Handler) into
// a MiddlewareFunc. The middleware is composed once per route, when the server
// starts; per request it gets an *http.Request built as for Adapt and a
// ResponseWriter that behaves as Adapt's.
//
// When the middleware calls the next handler, the Celeris chain continues with
// what it changed:
//   - its context.Context (values, deadline, cancellation) becomes c.Context() for
//     the rest of the chain, and is restored afterwards;
//   - the request it passed on: URL path (SetPath; seen by the router when the
//     link is Pre middleware), query, method, Host, RemoteAddr (ClientIP), header
//     fields and body (a body limited by http.MaxBytesHandler stays limited:
//     413) apply to the Context for the rest of the request;
//   - response header fields it set on the ResponseWriter before calling next are
//     copied to the Celeris response.
//
// When it passes next the ResponseWriter it got, the rest of the chain answers
// through the Context directly; a wrapper that watches writes sees WriteHeader
// with the final status when the response was written by the time next returned.
// When it passes a writer of its own (compression, a logger counting bytes), the
// chain's complete response (the error handler's answer included) is captured and
// written through that writer, so the wrapper sees and transforms it; a streamed
// response still goes to the client directly (the wrapper sees its status only).
// Writes the middleware makes after next returned are dropped unless it passed
// its own writer. If the middleware answers itself without calling next (an
// authentication failure, say), its response is sent.
//
// The middleware must call next synchronously, at most once: middleware that runs
// the handler on another goroutine and may return before it ends
// (http.TimeoutHandler) is not supported; use Context.SetContext with a deadline
// instead.
func WrapMiddleware(m func(http.Handler) http.Handler) MiddlewareFunc {
	if m == nil {
		panic("celeris: WrapMiddleware of a nil middleware")
	}
	return func(next HandlerFunc) HandlerFunc {
		inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			runWrappedNext(next, w, r)
		})
		h := m(inner)
		if h == nil {
			panic("celeris: WrapMiddleware: the middleware returned a nil http.Handler")
		}
		return func(c *Context) error {
			st := &wrapState{c: c}
			st.ctx = wrapCtx{Context: c.Context(), st: st}
			r, body := newNetRequest(c, &st.ctx)
			st.orig.set(r)
			w := acquireAdaptWriter(c, r.Method == http.MethodHead)
			w.st = st
			st.w = w
			h.ServeHTTP(w, r)
			body.close()
			if st.through {
				if c.streaming {
					w.done = true // streamed past the wrapper (wrap_propagate.go)
				}
				err := w.finish()
				releaseAdaptWriter(w)
				if st.err != nil {
					return st.err
				}
				return err
			}
			if st.called {
				w.done = true
				releaseAdaptWriter(w)
				return st.err
			}
			err := w.finish()
			releaseAdaptWriter(w)
			return err
		}
	}
}

// wrapState is one request through a WrapMiddleware link. It is reached from the
// http.Request's context (or, failing that, from the ResponseWriter).
type wrapState struct {
	ctx     wrapCtx
	c       *Context
	w       *adaptWriter
	called  bool // the middleware called next
	through bool // next answered through the middleware's own writer (wrap_propagate.go)
	orig    netOrig
	err     error // what the rest of the chain returned
}

// wrapKey is the context key of a *wrapState.
type wrapKey struct{}

// wrapCtx carries the wrapState through the middleware without an allocation of
// its own (it is embedded in wrapState).
type wrapCtx struct {
	context.Context
	st *wrapState
}

func (x *wrapCtx) Value(key any) any {
	if key == (wrapKey{}) {
		return x.st
	}
	return x.Context.Value(key)
}

// runWrappedNext is the http.Handler a WrapMiddleware link passes to the net/http
// middleware as "next": it continues the Celeris chain.
func runWrappedNext(next HandlerFunc, w http.ResponseWriter, r *http.Request) {
	st, _ := r.Context().Value(wrapKey{}).(*wrapState)
	if st == nil {
		st = findWrapState(w)
	}
	if st == nil {
		// The middleware replaced both the request context and the writer with
		// values unrelated to ours: there is no Context to continue with.
		http.Error(w, "celeris: WrapMiddleware lost the request", http.StatusInternalServerError)
		return
	}
	if st.called {
		return // at most once; see WrapMiddleware
	}
	st.called = true
	c := st.c
	prevCtx := c.ctx
	if ctx := r.Context(); ctx != context.Context(&st.ctx) {
		c.SetContext(ctx)
	}
	c.applyNetRequest(&st.orig, r) // what the middleware changed (wrap_propagate.go)
	aw := st.w
	if w != http.ResponseWriter(aw) && !aw.wrote {
		// The middleware's own writer: the response goes through it.
		st.through = true
		st.err = serveThrough(c, next, w)
		c.ctx = prevCtx
		return
	}
	copyNetHeader(c, w.Header(), nil, false)
	if aw.wrote {
		// The middleware committed a response before calling next: it wins, as the
		// first write does under net/http.
		_ = aw.finish()
	}
	aw.done = true
	st.err = next(c)
	c.ctx = prevCtx
	if c.written && c.status >= 100 && c.status <= 999 {
		w.WriteHeader(c.status) // let status-recording wrappers see the status
	}
}

// findWrapState walks the Unwrap chain of w (the convention of
// http.ResponseController) to our writer.
func findWrapState(w http.ResponseWriter) *wrapState {
	for range 16 {
		if aw, ok := w.(*adaptWriter); ok {
			return aw.st
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
	return nil
}
