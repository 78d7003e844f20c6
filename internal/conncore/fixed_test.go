package conncore

import (
	"errors"
	"testing"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// A core whose protocol was given (a tunnel's): fed from the first byte, no
// switch, a drain told once, OnClose once.
func TestNewFixed(t *testing.T) {
	fixed := func(p httpmsg.Proto) (*Core, *fakeConn) {
		fc := &fakeConn{}
		fc.core = NewFixed(fc, p)
		return fc.core, fc
	}
	for _, tc := range []struct {
		name  string
		p     *script
		in    string
		drain bool
		check func(t *testing.T, c *Core, p *script, fed int)
	}{
		{"fed from the first byte", &script{take: -1}, "PRI * HTTP/2.0\r\n", false, func(t *testing.T, c *Core, p *script, fed int) {
			if fed != 16 || string(p.fed) != "PRI * HTTP/2.0\r\n" || c.Proto() != httpmsg.Proto(p) {
				t.Fatalf("fed %d %q, protocol %v: the given protocol takes every byte, a preface included", fed, p.fed, c.Proto())
			}
		}},
		{"a hand-over fails", &script{take: -1, dataErr: httpmsg.ErrUpgrade}, "x", false, func(t *testing.T, c *Core, p *script, fed int) {
			if !c.Closing() || !errors.Is(c.Err(), errNoSwitch) {
				t.Fatalf("Closing %v, Err %v: a fixed protocol cannot hand over", c.Closing(), c.Err())
			}
		}},
		{"a drain is told once", &script{take: -1, level: -1}, "", true, func(t *testing.T, c *Core, p *script, fed int) {
			c.Wake()
			if p.drains != 1 || c.Closing() {
				t.Fatalf("drains %d, closing %v: Drain once, the protocol closes when it is done", p.drains, c.Closing())
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := fixed(tc.p)
			fed := 0
			if tc.in != "" {
				fed = c.Feed([]byte(tc.in), 1)
			}
			if tc.drain {
				c.AskDrain()
				c.Wake()
			}
			tc.check(t, c, tc.p, fed)
			c.Closed(nil)
			c.Closed(nil)
			if tc.p.closes != 1 {
				t.Fatalf("OnClose ran %d times", tc.p.closes)
			}
		})
	}
}
