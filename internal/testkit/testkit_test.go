package testkit

import (
	"log/slog"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	var n atomic.Int32
	go func() {
		for i := 0; i < 3; i++ {
			runtime.Gosched() // the event the wait is for comes later
			n.Add(1)
		}
	}()
	if !Until(Timeout, func() bool { return n.Load() == 3 }) {
		t.Fatal("Until did not see the condition")
	}
	start := time.Now()
	if Until(20*time.Millisecond, func() bool { return false }) {
		t.Fatal("Until reported a condition that never held")
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Fatalf("Until gave up after %v, before its timeout", d)
	}
}

func TestPortAndLog(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	Port(t, ln.Addr().String())

	var l Log
	log := slog.New(slog.NewTextHandler(&l, nil))
	go log.Info("ready", "n", 1)
	l.Wait(t, "msg=ready n=1")
	if l.Count("ready") != 1 {
		t.Fatalf("log %q", l.String())
	}
}

func TestGoroutines(t *testing.T) {
	base := runtime.NumGoroutine()
	stop := make(chan struct{})
	for i := 0; i < 4; i++ {
		go func() { <-stop }()
	}
	if runtime.NumGoroutine() < base+4 {
		t.Fatal("goroutines did not start")
	}
	close(stop)
	if got := Goroutines(t, base); got > base {
		t.Fatalf("%d goroutines, want %d", got, base)
	}
}

func TestSlowAndWindow(t *testing.T) {
	for _, f := range []func(time.Duration){Slow, Window} {
		start := time.Now()
		f(5 * time.Millisecond)
		if d := time.Since(start); d < 5*time.Millisecond {
			t.Fatalf("returned after %v, before 5ms", d)
		}
	}
}

func TestParked(t *testing.T) {
	block := make(chan struct{})
	done := make(chan struct{})
	go func() {
		parkedHere(block)
		close(done)
	}()
	Wait(t, "parkedHere blocked", Parked("testkit.parkedHere", "TestParked"))
	if Parked("testkit.parkedHere", "no such frame")() {
		t.Fatal("Parked matched a frame no goroutine has")
	}
	close(block)
	<-done
	if Parked("testkit.parkedHere")() {
		t.Fatal("Parked matched a goroutine that has ended")
	}
}

//go:noinline
func parkedHere(block chan struct{}) { <-block }
