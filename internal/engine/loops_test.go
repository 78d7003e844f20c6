//go:build linux

package engine

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/protoselect"
)

// okProto answers every input with "ok".
type okProto struct{ c httpmsg.Conn }

func (p okProto) OnData(in []byte) (int, error) { p.c.Write([]byte("ok")); return len(in), nil }
func (okProto) OnWake() error                   { return nil }
func (okProto) OnClose(error)                   {}
func (okProto) Busy() bool                      { return false }

// Connections are kept per event loop: while one loop's set is held (the
// ticker walking it), a connection on another loop opens and is served.
func TestConnectionsPerLoop(t *testing.T) {
	e := New(Config{Addr: "127.0.0.1:0", EventLoops: 2,
		Protocols: protoselect.Protocols{NewH1: func(c httpmsg.Conn) httpmsg.Proto { return okProto{c} }}})
	errc := make(chan error, 1)
	go func() { errc <- e.Run() }()
	if _, err := e.WaitReady(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
		<-errc
	}()
	ask := func() error {
		c, err := net.Dial("tcp", e.Addr().String())
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Second))
		if _, err := c.Write([]byte("x")); err != nil {
			return err
		}
		_, err = io.ReadFull(c, make([]byte, 2))
		return err
	}
	first, err := net.Dial("tcp", e.Addr().String()) // kept open: its loop has a connection
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	var held *loopState
	waitFor(t, func() bool {
		e.eachLoop(func(ls *loopState) {
			ls.connMu.Lock()
			if len(ls.conns) == 1 {
				held = ls
			}
			ls.connMu.Unlock()
		})
		return held != nil
	})
	held.connMu.Lock()
	err = ask() // gnet's round robin puts it on the other loop
	held.connMu.Unlock()
	if err != nil {
		t.Fatalf("a connection on another loop waited for this loop's set: %v", err)
	}
}
