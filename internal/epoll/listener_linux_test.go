package epoll

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

// An inherited listening socket (socket activation, a self-upgrade's) is
// served as it is: the engine reports its address, answers on it, and a
// drain closes it, so that new connections are refused.
func TestInheritedListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // f keeps the socket open
	e := New(Config{Listener: f, Loops: 2,
		Protocols: protoselect.Protocols{NewH1: func(c httpmsg.Conn) httpmsg.Proto { return okProto{c} }}})
	errc := make(chan error, 1)
	go func() { errc <- e.Run() }()
	a, err := e.WaitReady()
	if err != nil {
		t.Fatal(err)
	}
	if a.String() != addr {
		t.Fatalf("engine reports %s, the inherited listener is %s", a, addr)
	}
	for range 4 { // both loops
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 2)
		if _, err := io.ReadFull(c, b); err != nil || string(b) != "ok" {
			t.Fatalf("answer %q, %v", b, err)
		}
		c.Close()
	}
	e.Drain()
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("the inherited listener still accepts after Drain")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
