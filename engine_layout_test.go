//go:build linux

package celeris

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/epoll"
)

// simulateGnetMismatch makes the gnet layout check fail for the rest of t, as
// it does when the program is built with a gnet whose internals moved.
func simulateGnetMismatch(t *testing.T) error {
	errMoved := errors.New("celeris: gnet v9.9.9 is not laid out as gnet v2.10.0 (simulated)")
	old := checkGnet
	checkGnet = func() error { return errMoved }
	t.Cleanup(func() { checkGnet = old })
	return errMoved
}

// With EngineGnet named, a gnet the engine cannot reach into fails Start with
// the layout's error: never a server without its defences.
func TestGnetLayoutMismatchFailsStart(t *testing.T) {
	errMoved := simulateGnetMismatch(t)
	s := New(Config{Addr: "127.0.0.1:0", Engine: EngineGnet})
	errc := make(chan error, 1)
	go func() { errc <- s.Start() }()
	select {
	case err := <-errc:
		if !errors.Is(err, errMoved) {
			t.Fatalf("Start = %v, want the layout error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Start served with a gnet it cannot reach into")
	}
}

// With EngineAuto, the server serves from the epoll engine, which needs nothing
// of gnet's internals: a gnet whose layout moved changes nothing, and nothing
// about it is logged.
func TestGnetLayoutMismatchAutoServes(t *testing.T) {
	simulateGnetMismatch(t)
	var logs lockedBuffer
	s := New(Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	s.GET("/", func(c *Context) error { return c.String(http.StatusOK, "ok") })
	errc := runServer(t, s)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		<-errc
	}()
	if _, ok := s.eng.(*epoll.Engine); !ok {
		t.Fatalf("engine %T, want the epoll engine", s.eng)
	}
	resp, err := http.Get("http://" + s.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" {
		t.Fatalf("body %q", b)
	}
	if got := logs.String(); strings.Contains(got, "gnet") {
		t.Fatalf("log %q mentions gnet", got)
	}
}
