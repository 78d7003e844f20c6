package celeris

import (
	"errors"
	"net/http"

	"github.com/celeris-dev/celeris/internal/hook"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/work"
)

// errNoSwitch: the request's transport cannot switch protocols.
var errNoSwitch = errors.New("celeris: this request cannot switch protocols")

func init() {
	hook.Switch = func(ctx any, header []httpmsg.Field, p func(httpmsg.Conn) httpmsg.Proto) (int, error) {
		return ctx.(*Context).switchProtocol(header, p)
	}
	hook.Handler = func(server any) httpmsg.Handler { return server.(*Server).handler() }
	hook.Pool = func(ctx any) *work.Pool {
		if c := ctx.(*Context); c.server != nil {
			return c.server.pool
		}
		return nil
	}
}

// switchProtocol answers with the response header set so far plus header and
// hands the transport to the protocol p builds (101 on HTTP/1.1, 200 on an HTTP/2
// extended CONNECT stream).
func (c *Context) switchProtocol(header []httpmsg.Field, p func(httpmsg.Conn) httpmsg.Proto) (int, error) {
	if c.written {
		return 0, ErrResponseWritten
	}
	if _, ok := c.isExtendedConnect(); ok {
		// RFC 8441 §5: a 2xx answers the extended CONNECT; the stream is the
		// tunnel (tunnel.go), served until it closes.
		if err := c.runTunnel(header, p); err != nil {
			return 0, err
		}
		return http.StatusOK, nil
	}
	sw, ok := c.w.(httpmsg.Switcher)
	if !ok {
		return 0, errNoSwitch
	}
	status := http.StatusSwitchingProtocols
	fields := append(c.header, header...)
	if err := sw.Switch(fields, p); err != nil {
		return 0, err
	}
	c.warnUnmarkedTunnel()
	c.header = fields
	c.written = true
	c.status = status
	return status, nil
}
