package celeris_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// TestShutdownDelay: during Config.ShutdownDelay the readiness route answers
// 503 while other routes are served and new connections are accepted; after
// it the server stops accepting. HealthHandler answers 200 throughout.
func TestShutdownDelay(t *testing.T) {
	for _, eng := range []celeris.Engine{celeris.EngineGnet, celeris.EngineStd} {
		t.Run(string(eng), func(t *testing.T) {
			if eng == celeris.EngineGnet && runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
				t.Skip("no gnet engine on this OS")
			}
			const delay = 600 * time.Millisecond
			s := celeris.New(celeris.Config{Addr: "127.0.0.1:0", Engine: eng, EventLoops: 1, ShutdownDelay: delay})
			s.GET("/healthz", s.HealthHandler())
			s.GET("/readyz", s.ReadyHandler())
			s.GET("/hello", func(c *celeris.Context) error { return c.String(200, "hello") })
			errc := make(chan error, 1)
			go func() { errc <- s.Start() }()
			<-s.Ready()
			base := "http://" + s.Addr().String()
			get := func(path string) (int, string) {
				t.Helper()
				c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
				resp, err := c.Get(base + path)
				if err != nil {
					t.Fatalf("GET %s: %v", path, err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			if code, body := get("/readyz"); code != 200 || body != "ready" {
				t.Fatalf("/readyz before shutdown: %d %q", code, body)
			}
			start := time.Now()
			done := make(chan error, 1)
			go func() { done <- s.Shutdown(context.Background()) }()
			testkit.Wait(t, "the readiness flip", s.NotReady)
			// New connections (DisableKeepAlives) during the delay.
			for i := 0; i < 3; i++ {
				if code, _ := get("/readyz"); code != http.StatusServiceUnavailable {
					t.Fatalf("/readyz during the delay: %d, want 503", code)
				}
				if code, body := get("/hello"); code != 200 || body != "hello" {
					t.Fatalf("/hello during the delay: %d %q", code, body)
				}
				if code, _ := get("/healthz"); code != 200 {
					t.Fatalf("/healthz during the delay: %d", code)
				}
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d < delay {
				t.Fatalf("Shutdown returned after %v, before its delay %v", d, delay)
			}
			if c, err := net.DialTimeout("tcp", s.Addr().String(), time.Second); err == nil {
				c.Close()
				t.Fatal("a connection was accepted after the shutdown")
			}
			<-errc
		})
	}
}
