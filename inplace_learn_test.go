package celeris

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/directrun"
)

// Handlers in place, learnt per route (Config.HandlersOnWorkers): a route runs
// in place until its runs show that it waits, and on workers from then on.
// Each handler answers where it ran, read from its own goroutine's stack: a
// direct run (an epoll loop's, or the std engine connection goroutine's, for
// HTTP/2) or a worker's.

// ranInPlace reports whether the calling handler runs in place.
func ranInPlace() bool {
	buf := make([]byte, 64<<10)
	return strings.Contains(string(buf[:runtime.Stack(buf, false)]), ").runDirect(")
}

// whereRoute answers "place" or "worker".
func whereRoute(c *Context) error {
	if ranInPlace() {
		return c.String(http.StatusOK, "place")
	}
	return c.String(http.StatusOK, "worker")
}

// getWhere asks path with client and returns where its handler ran.
func getWhere(t *testing.T, client *http.Client, url string) string {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %q %v", url, resp.StatusCode, b, err)
	}
	return string(b)
}

// learnServer starts a server on the epoll engine with one loop.
func learnServer(t *testing.T, cfg Config, register func(s *Server)) string {
	t.Helper()
	if !epollAvailable {
		t.Skip("handlers in place on HTTP/1.1 need the epoll engine")
	}
	cfg.Engine, cfg.EventLoops = EngineEpoll, 1
	_, addr := startServer(t, cfg, register)
	return "http://" + addr
}

func TestInPlaceLearntPerRoute(t *testing.T) {
	clients := map[string]func() *http.Client{
		"h1":  func() *http.Client { return &http.Client{Timeout: 30 * time.Second} },
		"h2c": h2cClient,
	}
	for _, proto := range []string{"h1", "h2c"} {
		t.Run(proto, func(t *testing.T) {
			t.Run("quick route stays in place", func(t *testing.T) {
				var r *Route
				url := learnServer(t, Config{InPlaceThreshold: time.Hour}, func(s *Server) {
					r = s.GET("/quick", whereRoute)
				})
				client := clients[proto]()
				for i := range 20 {
					if got := getWhere(t, client, url+"/quick"); got != "place" {
						t.Fatalf("request %d ran on a %s", i, got)
					}
				}
				if r.inPlace.Waits() {
					t.Fatal("the route's record says its handler waits")
				}
			})
			t.Run("slow runs move the route to workers", func(t *testing.T) {
				// A threshold of a nanosecond makes every run slow: the route
				// runs in place Strikes times, then on workers; another route
				// keeps its own record.
				var slow, other *Route
				url := learnServer(t, Config{InPlaceThreshold: time.Nanosecond}, func(s *Server) {
					slow = s.GET("/slow", whereRoute)
					other = s.GET("/other", whereRoute)
				})
				client := clients[proto]()
				for i := range directrun.Strikes {
					if got := getWhere(t, client, url+"/slow"); got != "place" {
						t.Fatalf("request %d of %d ran on a %s", i+1, directrun.Strikes, got)
					}
				}
				if !slow.inPlace.Waits() {
					t.Fatalf("after %d slow runs the route's record does not say it waits", directrun.Strikes)
				}
				for range 3 {
					if got := getWhere(t, client, url+"/slow"); got != "worker" {
						t.Fatalf("the route that waits ran in %s", got)
					}
				}
				if got := getWhere(t, client, url+"/other"); got != "place" || other.inPlace.Waits() {
					t.Fatalf("another route ran on a %s (waits: %v)", got, other.inPlace.Waits())
				}
			})
			t.Run("a run the watch moves", func(t *testing.T) {
				// A handler blocked on a channel is moved off the loop by the
				// engine's watch; its route's record says it waits before the
				// handler returns.
				release := make(chan struct{})
				var r *Route
				url := learnServer(t, Config{}, func(s *Server) {
					r = s.GET("/block", func(c *Context) error {
						<-release
						return whereRoute(c)
					})
				})
				client := clients[proto]()
				first := make(chan string, 1)
				go func() {
					resp, err := client.Get(url + "/block")
					if err != nil {
						first <- err.Error()
						return
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					first <- string(b)
				}()
				deadline := time.Now().Add(10 * time.Second)
				for !r.inPlace.Waits() {
					if time.Now().After(deadline) {
						close(release)
						t.Fatal("the blocked handler's route was not learnt as one that waits")
					}
					runtime.Gosched()
				}
				close(release)
				if got := <-first; got != "place" {
					t.Fatalf("the first request: %q, want it moved from its loop (place)", got)
				}
				if got := getWhere(t, client, url+"/block"); got != "worker" {
					t.Fatalf("the second request ran in %s", got)
				}
			})
			t.Run("a flush moves the run", func(t *testing.T) {
				// A handler that flushes before its end needs the loop to
				// write: the run moves, and the route goes to workers.
				var r *Route
				url := learnServer(t, Config{InPlaceThreshold: time.Hour}, func(s *Server) {
					r = s.GET("/stream", func(c *Context) error {
						where := "worker"
						if ranInPlace() {
							where = "place"
						}
						sw, err := c.Stream(http.StatusOK, "text/plain")
						if err != nil {
							return err
						}
						if _, err := io.WriteString(sw, where); err != nil {
							return err
						}
						return sw.Flush()
					})
				})
				client := clients[proto]()
				if got := getWhere(t, client, url+"/stream"); got != "place" {
					t.Fatalf("the first request ran on a %s", got)
				}
				if !r.inPlace.Waits() {
					t.Fatal("a run that flushed did not make its route one that waits")
				}
				if got := getWhere(t, client, url+"/stream"); got != "worker" {
					t.Fatalf("the second request ran in %s", got)
				}
			})
			t.Run("HandlersOnWorkers", func(t *testing.T) {
				url := learnServer(t, Config{HandlersOnWorkers: true}, func(s *Server) {
					s.GET("/quick", whereRoute)
				})
				client := clients[proto]()
				for range 3 {
					if got := getWhere(t, client, url+"/quick"); got != "worker" {
						t.Fatalf("with HandlersOnWorkers a request ran in %s", got)
					}
				}
			})
		})
	}
}

// On the std engine an HTTP/1.1 handler runs on its connection's goroutine,
// which no other connection waits for: a route learnt to wait still runs there
// (h1.ServerConfig.LearnInPlace is off), while its HTTP/2 streams go to workers.
func TestInPlaceStdEngineH1IgnoresRecords(t *testing.T) {
	var r *Route
	_, addr := startServer(t, Config{Engine: EngineStd, InPlaceThreshold: time.Nanosecond}, func(s *Server) {
		r = s.GET("/slow", whereRoute)
	})
	url := "http://" + addr + "/slow"
	h2 := h2cClient()
	for range directrun.Strikes {
		if got := getWhere(t, h2, url); got != "place" {
			t.Fatalf("an h2c stream ran on a %s before its route was learnt", got)
		}
	}
	if !r.inPlace.Waits() {
		t.Fatal("the route was not learnt as one that waits")
	}
	if got := getWhere(t, h2, url); got != "worker" {
		t.Fatalf("an h2c stream of a route that waits ran in %s", got)
	}
	h1 := &http.Client{Timeout: 30 * time.Second}
	for range 3 {
		if got := getWhere(t, h1, url); got != "place" {
			t.Fatalf("an HTTP/1.1 request on the std engine ran on a %s", got)
		}
	}
}
