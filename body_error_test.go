package celeris

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/testkit"
)

// jsonErrors is an API's error handler: every *HTTPError in one JSON format,
// anything else 500.
func jsonErrors(c *Context, err error) {
	if c.Written() {
		return
	}
	var he *HTTPError
	if errors.As(err, &he) {
		_ = c.JSON(he.Code, map[string]any{"status": he.Code, "error": he.Error()})
		return
	}
	_ = c.JSON(500, map[string]any{"status": 500, "error": "internal"})
}

// statusLog records the status each request got as middleware sees it when the
// chain returns (what logger and metrics record).
type statusLog struct {
	mu  sync.Mutex
	got []int
}

func (l *statusLog) mw(next HandlerFunc) HandlerFunc {
	return func(c *Context) error {
		err := next(c)
		l.mu.Lock()
		l.got = append(l.got, c.ResultStatus(err))
		l.mu.Unlock()
		return err
	}
}

func (l *statusLog) last() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.got) == 0 {
		return 0
	}
	return l.got[len(l.got)-1]
}

// unknownLength hides a reader's length from net/http, so that HTTP/1.1 sends
// it chunked and HTTP/2 without content-length.
type unknownLength struct{ io.Reader }

// TestBodyTooLargeReachesErrorHandler: a streamed body (chunked on HTTP/1.1, no
// content-length on HTTP/2) over MaxRequestBodySize, read with c.Body(), reaches
// a custom error handler as a 413 *HTTPError on every protocol: no 500, no
// RST_STREAM CANCEL, no ERROR log, and middleware records 413.
func TestBodyTooLargeReachesErrorHandler(t *testing.T) {
	t.Run("custom", func(t *testing.T) { testBodyTooLarge(t, jsonErrors) })
	t.Run("default", func(t *testing.T) { testBodyTooLarge(t, nil) })
}

func testBodyTooLarge(t *testing.T, eh ErrorHandler) {
	var logs lockedBuffer
	var sl statusLog
	_, addr := startServer(t, Config{
		MaxRequestBodySize: 1 << 20,
		ErrorHandler:       eh,
		Logger:             slog.New(slog.NewTextHandler(&logs, nil)),
	}, func(s *Server) {
		s.Use(sl.mw)
		s.POST("/body", func(c *Context) error {
			b, err := c.Body()
			if err != nil {
				return err
			}
			return c.String(200, "read "+strconv.Itoa(len(b)))
		})
		s.POST("/reader", func(c *Context) error {
			_, err := io.Copy(io.Discard, c.BodyReader())
			if err != nil {
				return err
			}
			return c.String(200, "read")
		})
	})
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		for _, path := range []string{"/body", "/reader"} {
			body := unknownLength{bytes.NewReader(make([]byte, 3<<20))}
			resp, err := cl.Post("http://"+addr+path, "application/octet-stream", body)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			var got struct{ Status int }
			var derr error
			if eh != nil {
				derr = json.NewDecoder(resp.Body).Decode(&got)
			} else {
				got.Status = resp.StatusCode
			}
			resp.Body.Close()
			if resp.StatusCode != 413 || derr != nil || got.Status != 413 {
				t.Errorf("%s: %d %+v (%v), want a 413 from the error handler", path, resp.StatusCode, got, derr)
			}
			if s := sl.last(); s != 413 {
				t.Errorf("%s: middleware saw %d, want 413", path, s)
			}
		}
	})
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("errors logged:\n%s", logs.String())
	}
}

// TestMalformedChunkedReachesErrorHandler: a malformed chunked body read by the
// handler reaches the error handler as a 400 *HTTPError.
func TestMalformedChunkedReachesErrorHandler(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{ErrorHandler: jsonErrors}, func(s *Server) {
		s.POST("/body", func(c *Context) error {
			if _, err := c.Body(); err != nil {
				return err
			}
			return c.String(200, "read")
		})
	})
	r := dialRaw(t, addr)
	r.send("POST /body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n")
	resp := r.readResponse("POST")
	body := bodyString(t, resp)
	if resp.StatusCode != 400 || !strings.Contains(body, `"status":400`) {
		t.Fatalf("%d %q, want a 400 from the error handler", resp.StatusCode, body)
	}
}

// TestRoutingErrorsReachErrorHandler: 404 and 405 reach the configured error
// handler as *HTTPError, so a JSON API answers them in its own format; 405
// keeps its Allow header.
func TestRoutingErrorsReachErrorHandler(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{ErrorHandler: jsonErrors}, func(s *Server) {
		s.GET("/only-get", func(c *Context) error { return c.String(200, "ok") })
	})
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		for _, tt := range []struct {
			method, path string
			status       int
		}{
			{method: "GET", path: "/missing", status: 404},
			{method: "DELETE", path: "/only-get", status: 405},
		} {
			req, _ := http.NewRequest(tt.method, "http://"+addr+tt.path, nil)
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var got struct{ Status int }
			derr := json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if resp.StatusCode != tt.status || derr != nil || got.Status != tt.status ||
				resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s %s: %d %q %+v (%v), want %d from the error handler", tt.method, tt.path,
					resp.StatusCode, resp.Header.Get("Content-Type"), got, derr, tt.status)
			}
			if tt.status == 405 && resp.Header.Get("Allow") == "" {
				t.Errorf("405 without Allow")
			}
		}
	})
}

// Closing the reader BodyReader returns ends a Read blocked on another
// goroutine (the client sends nothing more), on HTTP/1.1 (chunked) and HTTP/2.
func TestBodyReaderCloseEndsBlockedRead(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.POST("/wait", func(c *Context) error {
			br := c.BodyReader()
			cl, ok := br.(io.Closer)
			if !ok {
				return c.String(500, "not a Closer")
			}
			done := make(chan error, 1)
			go func() {
				_, err := io.ReadAll(br)
				done <- err
			}()
			// the reader blocks in Read before Close
			testkit.Until(testkit.Timeout, testkit.Parked("TestBodyReaderCloseEndsBlockedRead", ").Read("))
			if err := cl.Close(); err != nil {
				return c.String(500, "close: "+err.Error())
			}
			select {
			case err := <-done:
				if err == nil {
					return c.String(500, "read ended without an error")
				}
				return c.String(200, "ended")
			case <-time.After(5 * time.Second):
				return c.String(500, "read still blocked")
			}
		})
	})
	for name, client := range map[string]*http.Client{"h1": adaptClient(t), "h2c": h2cClient()} {
		t.Run(name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			go pw.Write([]byte("some"))
			req, _ := http.NewRequest("POST", "http://"+addr+"/wait", pr)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(body) != "ended" {
				t.Fatalf("%d %q", resp.StatusCode, body)
			}
		})
	}
}
