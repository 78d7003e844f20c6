package celeris

// Borrowed request values.
//
// By default the strings and slices that Context returns for the request (Path,
// Param, Query, Header, Body, ...) are views into buffers the connection reuses
// once the handler returns: no copy per request. Config.CopyRequestValues makes
// each of them an owned copy instead, for teams that prefer safety to the last
// allocation. Race builds (go test -race) overwrite the recycled buffers with a
// poison byte (internal/poison), so a test that keeps a borrowed value reads
// garbage and fails instead of passing by luck.

import (
	"bytes"
	"net/url"
	"strings"
)

// own returns s, or a copy of it under Config.CopyRequestValues.
func (c *Context) own(s string) string {
	if c.server.cfg.CopyRequestValues && s != "" {
		return strings.Clone(s)
	}
	return s
}

// ownBytes returns b, or a copy of it under Config.CopyRequestValues.
func (c *Context) ownBytes(b []byte) []byte {
	if c.server.cfg.CopyRequestValues && b != nil {
		return bytes.Clone(b)
	}
	return b
}

// Param returns the value of the path parameter name ("" when absent),
// percent-decoded ("a%20b" is "a b"; it allocates only when there is something to
// decode; a malformed escape leaves the value as received). RawParam gives the
// value as received. Valid until the handler returns, unless
// Config.CopyRequestValues is set.
func (c *Context) Param(name string) string {
	v, _ := c.params.Get(name)
	return c.own(decodePathValue(v))
}

// RawParam returns the value of the path parameter name as it appears in the
// request path, not decoded. Valid until the handler returns, unless
// Config.CopyRequestValues is set.
func (c *Context) RawParam(name string) string {
	v, _ := c.params.Get(name)
	return c.own(v)
}

// decodePathValue percent-decodes a path segment (not '+': that is a query
// convention); a malformed escape returns v unchanged.
func decodePathValue(v string) string {
	if strings.IndexByte(v, '%') < 0 {
		return v
	}
	d, err := url.PathUnescape(v)
	if err != nil {
		return v
	}
	return d
}
