package browser_test

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/celeristest/browser"
)

// page fetches /slow and shows what it answered in #r; #r says "waiting"
// until then, "error" when the fetch fails.
const page = `<!doctype html><meta charset="utf-8"><title>t</title><b id="r">waiting</b>
<script>
fetch("/slow").then((r) => r.text()).then((t) => { document.getElementById("r").textContent = t; },
	() => { document.getElementById("r").textContent = "error"; });
</script>`

const result = `(() => { const e = document.getElementById("r"); return e ? e.textContent : ""; })()`

// settled is the done function of the tests: any value but "" (no document
// yet) and "waiting" is final.
func settled(v string) (bool, error) { return v != "" && v != "waiting", nil }

// TestPoll: Chromium loads a page from a server on 127.0.0.1 whose script
// fetches a resource that answers late; Poll waits for the page's answer
// instead of reading the page too early, stops at the first error done
// returns, and gives up at its deadline with the last value.
func TestPoll(t *testing.T) {
	chromium := browser.Chromium(t)
	slow := make(chan string, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case v := <-slow:
			_, _ = w.Write([]byte(v))
		case <-r.Context().Done():
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	url := "http://" + ln.Addr().String() + "/"

	b := browser.Start(t, chromium)

	t.Run("waits for the page", func(t *testing.T) {
		deadline := time.Now().Add(60 * time.Second)
		p, err := b.Open(deadline, url)
		if err != nil {
			t.Fatal(err)
		}
		// Answer /slow only after the page has been seen waiting.
		seenWaiting := false
		got, err := p.Poll(deadline, result, func(v string) (bool, error) {
			if v == "waiting" && !seenWaiting {
				seenWaiting = true
				slow <- "late answer"
			}
			return settled(v)
		})
		if err != nil {
			t.Fatal(err)
		}
		if got != "late answer" || !seenWaiting {
			t.Fatalf("Poll returned %q (page seen waiting: %v), want %q after waiting", got, seenWaiting, "late answer")
		}
	})

	t.Run("done's error stops it", func(t *testing.T) {
		deadline := time.Now().Add(60 * time.Second)
		p, err := b.Open(deadline, url)
		if err != nil {
			t.Fatal(err)
		}
		stop := errors.New("stop")
		start := time.Now()
		_, err = p.Poll(deadline, result, func(v string) (bool, error) {
			if v == "waiting" {
				return false, stop
			}
			return false, nil
		})
		if !errors.Is(err, stop) || time.Since(start) > 30*time.Second {
			t.Fatalf("Poll returned %v after %v, want done's error at once", err, time.Since(start))
		}
	})

	t.Run("deadline", func(t *testing.T) {
		p, err := b.Open(time.Now().Add(60*time.Second), url)
		if err != nil {
			t.Fatal(err)
		}
		// Wait for the page to be seen waiting, then poll with a short
		// deadline: /slow never answers this page.
		if _, err := p.Poll(time.Now().Add(60*time.Second), result, func(v string) (bool, error) { return v == "waiting", nil }); err != nil {
			t.Fatal(err)
		}
		got, err := p.Poll(time.Now().Add(500*time.Millisecond), result, settled)
		if err == nil || got != "waiting" || !strings.Contains(err.Error(), `last value "waiting"`) {
			t.Fatalf("Poll returned %q, %v; want the last value %q and a deadline error naming it", got, err, "waiting")
		}
	})

	t.Run("exception", func(t *testing.T) {
		p, err := b.Open(time.Now().Add(60*time.Second), "about:blank")
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Eval(time.Now().Add(60*time.Second), `(() => { throw new Error("boom"); })()`)
		var perr *browser.ProtocolError
		if !errors.As(err, &perr) || !strings.Contains(perr.Message, "boom") {
			t.Fatalf("Eval of a throwing expression returned %v, want a *ProtocolError naming the exception", err)
		}
	})
}
