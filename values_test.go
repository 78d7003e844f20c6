package celeris

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/bytesconv"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// kept records values a handler kept past its return (what the tests below show
// is wrong by default, and right under CopyRequestValues).
type kept struct {
	mu   sync.Mutex
	vals []string
}

func (k *kept) keep(c *Context) error {
	body, err := c.Body()
	if err != nil {
		return err
	}
	k.mu.Lock()
	if k.vals == nil { // the first request's only
		ck, _ := c.Cookie("s")
		k.vals = []string{c.Param("id"), c.RawParam("id"), c.Query("q"), c.Header("X-A"), c.Path(), bytesconv.B2S(body), ck}
	}
	k.mu.Unlock()
	return c.String(200, "ok")
}

func (k *kept) get() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.vals...)
}

var firstValues = []string{"abc", "abc", "first", "alpha", "/v/abc", "body-one", "cookie-one"}

// sendTwo sends two requests on one HTTP/1.1 connection, so the second reuses
// the first one's buffers.
func sendTwo(t *testing.T, addr string) {
	r := dialRaw(t, addr)
	r.send("POST /v/abc?q=first HTTP/1.1\r\nHost: x\r\nX-A: alpha\r\nCookie: s=cookie-one\r\nContent-Length: 8\r\n\r\nbody-one")
	r.readResponse("POST")
	r.send("POST /v/xyz?q=other HTTP/1.1\r\nHost: x\r\nX-A: omega\r\nCookie: s=cookie-two\r\nContent-Length: 8\r\n\r\nbody-two")
	r.readResponse("POST")
}

func TestCopyRequestValues(t *testing.T) {
	t.Parallel()
	for _, inline := range []bool{false, true} {
		var k kept
		s, addr := startServer(t, Config{CopyRequestValues: true}, func(s *Server) {
			r := s.POST("/v/:id", k.keep)
			if inline {
				r.Inline()
			}
		})
		sendTwo(t, addr) // the second request reuses the first one's buffers
		// Both exchanges ended in the server: recycled (and poisoned, in race
		// builds, which would also report reads of values still borrowed).
		testkit.Wait(t, "the requests to end", func() bool { return s.Stats().ActiveRequests == 0 })
		if got := k.get(); strings.Join(got, "|") != strings.Join(firstValues, "|") {
			t.Errorf("inline=%v: kept %q, want %q", inline, got, firstValues)
		}
	}
}

func TestParamDecoded(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/p/:name/*rest", func(c *Context) error {
			return c.String(200, c.Param("name")+"|"+c.RawParam("name")+"|"+c.Param("rest")+"|"+c.RawParam("rest"))
		})
	})
	tests := []struct{ path, want string }{
		{"/p/a%20b/c%2Fd", "a b|a%20b|c/d|c%2Fd"},
		{"/p/plain/x", "plain|plain|x|x"},
		{"/p/a+b/%zz", "a+b|a+b|%zz|%zz"}, // '+' is not a space in a path; a bad escape stays as received
	}
	for _, tt := range tests {
		if code, body := rawGet(t, addr, tt.path); code != 200 || body != tt.want {
			t.Errorf("%s: %d %q, want %q", tt.path, code, body, tt.want)
		}
	}
}

// TestBorrowedValuesPoisoned: under the race detector, recycled request buffers
// are poisoned when the request ends, so a test that keeps a borrowed value fails
// loudly (the race detector reports the poisoning write, and the value reads
// 0xDB bytes) instead of passing by luck until a later request reuses the
// buffer. It runs such a test (TestKeepBorrowedChild) in a child process, per
// case, and expects it to fail.
func TestBorrowedValuesPoisoned(t *testing.T) {
	if !raceEnabled {
		t.Skip("poisoning is on in race builds only (go test -race)")
	}
	for _, mode := range []string{"h1", "h1-inline", "h2-inline-body"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestKeepBorrowedChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "CELERIS_KEEP_BORROWED="+mode)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("a test keeping borrowed values passed:\n%s", out)
			}
			if !bytes.Contains(out, []byte("DATA RACE")) && !bytes.Contains(out, []byte(`\xdb`)) {
				t.Fatalf("failed for another reason:\n%s", out)
			}
		})
	}
}

// TestKeepBorrowedChild is the wrong test TestBorrowedValuesPoisoned runs: it
// keeps request values past the handler and checks them afterwards.
func TestKeepBorrowedChild(t *testing.T) {
	mode := os.Getenv("CELERIS_KEEP_BORROWED")
	if mode == "" {
		t.Skip("run by TestBorrowedValuesPoisoned")
	}
	var k kept
	_, addr := startServer(t, Config{}, func(s *Server) {
		r := s.POST("/v/:id", k.keep)
		if mode != "h1" {
			r.Inline()
		}
	})
	want := firstValues
	if mode == "h2-inline-body" {
		cl := h2cClient()
		defer cl.CloseIdleConnections()
		req, _ := http.NewRequest("POST", "http://"+addr+"/v/abc?q=first", strings.NewReader("body-one"))
		req.Header.Set("X-A", "alpha")
		req.Header.Set("Cookie", "s=cookie-one")
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	} else {
		r := dialRaw(t, addr)
		r.send("POST /v/abc?q=first HTTP/1.1\r\nHost: x\r\nX-A: alpha\r\nCookie: s=cookie-one\r\nContent-Length: 8\r\n\r\nbody-one")
		r.readResponse("POST")
	}
	testkit.Window(100 * time.Millisecond) // a sleep: the server recycles (and poisons) the exchange after the request ended, with no event a client sees; the wrong test must see that
	k.mu.Lock()
	got := k.vals
	k.mu.Unlock()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("kept value %d is %q, want %q", i, got[i], want[i])
		}
	}
}
