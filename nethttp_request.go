package celeris

import "net/http"

// netRequestKey is the Context value key of the *http.Request Request built.
const netRequestKey = "celeris.request\x00"

type netRequest struct {
	r    *http.Request
	body *adaptBody
}

// Request returns the request as an *http.Request, for libraries that take one
// (OAuth, signature checks, form decoders). It is built on the first call (as
// Adapt builds one: every string copied, path parameters as PathValue, the body
// streaming from the connection, c.Context() as its context) and cached for the
// rest of the request; requests that never ask pay nothing. The request is the
// handler's until it returns: reading its body afterwards fails. Changes made to
// it do not reach the Context (use WrapMiddleware for middleware that changes the
// request).
func (c *Context) Request() *http.Request {
	if v, ok := c.Get(netRequestKey); ok {
		return v.(*netRequest).r
	}
	r, body := newNetRequest(c, c.Context())
	c.Set(netRequestKey, &netRequest{r: r, body: body})
	return r
}

// closeNetRequest ends the body of the request Request built, if any (reset).
func (c *Context) closeNetRequest() {
	if v, ok := c.Get(netRequestKey); ok {
		v.(*netRequest).body.close()
	}
}
