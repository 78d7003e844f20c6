package celeris

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/internal/testkit"
)

// halfCloseRoutes: safe routes that answer at once, after a while, with a large
// body and with a streamed body, and an inline one.
func halfCloseRoutes(s *Server) {
	s.GET("/quick", func(c *Context) error { return c.String(200, "quick") })
	s.GET("/slow", func(c *Context) error {
		answerLate()
		return c.String(200, "slow")
	})
	s.GET("/big", func(c *Context) error {
		return c.Blob(200, "application/octet-stream", bytes.Repeat([]byte("b"), 8<<20))
	})
	s.GET("/stream", func(c *Context) error {
		w, err := c.Stream(200, "text/plain")
		if err != nil {
			return err
		}
		chunk := bytes.Repeat([]byte("s"), 1<<20)
		for range 12 {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		return nil
	})
	s.GET("/inline", func(c *Context) error { return c.String(200, "inline") }).Inline()
	s.GET("/inlinebig", func(c *Context) error {
		return c.Blob(200, "application/octet-stream", bytes.Repeat([]byte("i"), 16<<20))
	}).Inline()
	s.POST("/slowcount", func(c *Context) error {
		n, err := readSlowly(c.BodyReader(), 64<<10, 2*time.Millisecond)
		if err != nil {
			return err
		}
		return c.String(200, strconv.FormatInt(n, 10))
	})
	s.GET("/slowbig", func(c *Context) error {
		answerLate()
		n, _ := strconv.Atoi(c.Query("mib"))
		return c.Blob(200, "application/octet-stream", bytes.Repeat([]byte("b"), n<<20))
	})
}

// answerLate holds a route's answer, so that the client's half-close, sent
// with its request, reaches the server first.
func answerLate() {
	testkit.Slow(150 * time.Millisecond) // a sleep: the server must see the half-close before the answer, and a handler cannot see it
}

// readSlowly reads r to its end, size bytes at most every pause, so that its
// peer gets ahead: a handler's body backs up into the engine's buffers, an
// answer waits in the server. The error is nil at the end.
func readSlowly(r io.Reader, size int, pause time.Duration) (int64, error) {
	buf := make([]byte, size)
	var n int64
	for {
		m, err := r.Read(buf)
		n += int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		testkit.Slow(pause) // a sleep: a reader that falls behind its peer for a time, on purpose; one that waited for its peer instead would find the data whole
	}
}

// halfClose sends raw, shuts the sending side down, and reads until the server
// closes (the read deadline fails the test when it does not).
func halfClose(t *testing.T, addr, raw string) []byte {
	t.Helper()
	c := dialTCP(t, addr, 0)
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read until the server closes: %v (got %d bytes)", err, len(all))
	}
	return all
}

// responses parses every response in b (GET requests).
func responses(t *testing.T, b []byte) []string {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(b))
	var bodies []string
	for {
		if _, err := br.Peek(1); err == io.EOF {
			return bodies
		}
		resp, err := http.ReadResponse(br, &http.Request{Method: "GET"})
		if err != nil {
			t.Fatalf("response %d: %v", len(bodies)+1, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("response %d body: %v", len(bodies)+1, err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("response %d: status %d", len(bodies)+1, resp.StatusCode)
		}
		bodies = append(bodies, string(body))
	}
}

// A client that half-closes after its requests still gets every answer, in order,
// and then the server closes (RFC 9112 §9.6: the client may still read).
func TestH1HalfCloseAnswered(t *testing.T) {
	s, addr := startServer(t, Config{}, halfCloseRoutes)
	get := func(p string) string { return "GET " + p + " HTTP/1.1\r\nHost: x\r\n\r\n" }
	tests := []struct {
		name string
		raw  string
		want []string
		size int // total length of the bodies, when some are large
	}{
		{"safe", get("/quick"), []string{"quick"}, 0},
		{"slow", get("/slow"), []string{"slow"}, 0},
		{"inline", get("/inline"), []string{"inline"}, 0},
		{"pipelined", get("/slow") + get("/quick") + get("/inline") + get("/quick"), []string{"slow", "quick", "inline", "quick"}, 0},
		{"close ends", get("/slow") + "GET /quick HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + get("/quick"), []string{"slow", "quick"}, 0},
		{"incomplete tail", get("/slow") + "GET /quick HTTP/1.1\r\nHo", []string{"slow"}, 0},
		{"large body", get("/big") + get("/quick"), nil, 8<<20 + len("quick")},
		{"streamed body", get("/stream") + get("/quick"), nil, 12<<20 + len("quick")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := halfClose(t, addr, tt.raw)
			if tt.want != nil {
				got := responses(t, out)
				if strings.Join(got, ",") != strings.Join(tt.want, ",") {
					t.Fatalf("bodies %q, want %q", got, tt.want)
				}
				return
			}
			br := bufio.NewReader(bytes.NewReader(out))
			total := 0
			for n := 0; n < 2; n++ {
				resp, err := http.ReadResponse(br, &http.Request{Method: "GET"})
				if err != nil {
					t.Fatalf("response %d: %v", n+1, err)
				}
				b, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatalf("response %d body: %v after %d bytes", n+1, err, len(b))
				}
				total += len(b)
			}
			if total != tt.size {
				t.Fatalf("bodies total %d bytes, want %d", total, tt.size)
			}
		})
	}
	waitOpenConnections(t, s, 0)
}

// Many clients half-close at once while workers serve them, some pipelining:
// every one gets its answers and no connection is left behind.
func TestH1HalfCloseConcurrent(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, Config{}, halfCloseRoutes)
	const clients = 100
	errs := make(chan error, clients)
	for i := range clients {
		go func() {
			raw := "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"
			want := 1
			if i%2 == 0 {
				raw += "GET /quick HTTP/1.1\r\nHost: x\r\n\r\nGET /inline HTTP/1.1\r\nHost: x\r\n\r\n"
				want = 3
			}
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			if _, err := io.WriteString(c, raw); err != nil {
				errs <- err
				return
			}
			_ = c.(*net.TCPConn).CloseWrite()
			all, err := io.ReadAll(c)
			if err != nil {
				errs <- err
				return
			}
			if n := bytes.Count(all, []byte("HTTP/1.1 200 OK\r\n")); n != want {
				errs <- fmt.Errorf("client %d: %d answers, want %d", i, n, want)
				return
			}
			errs <- nil
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	waitOpenConnections(t, s, 0)
}

// A client that closes completely while its request is served: the handler's
// context is cancelled at once (as with net/http), and the connection's state is
// released once the answer fails to go out.
func TestH1CloseWhileServedReleases(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	cancelled := make(chan struct{}, 1)
	s, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/wait", func(c *Context) error {
			started <- struct{}{}
			select {
			case <-c.Context().Done():
				cancelled <- struct{}{}
			case <-time.After(5 * time.Second):
			}
			return c.String(200, strings.Repeat("x", 1<<20))
		})
	})
	rc := dialRaw(t, addr)
	rc.send("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
	<-started
	rc.c.Close()
	select {
	case <-cancelled:
	case <-time.After(3 * time.Second):
		t.Fatal("the handler's context was not cancelled")
	}
	waitOpenConnections(t, s, 0)
}

// Shutdown waits for the answer owed to a client that half-closed.
func TestH1HalfCloseShutdownDelivers(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, Config{}, halfCloseRoutes)
	c := dialTCP(t, addr, 0)
	io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	c.CloseWrite()
	// Shutdown may see the connection before or after the loop saw the half-close:
	// the answer is owed either way.
	waitFor(t, "the request to run", func() bool { return s.Stats().ActiveRequests == 1 })
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(t.Context()) }()
	all, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := responses(t, all); len(got) != 1 || got[0] != "slow" {
		t.Fatalf("bodies %q, want [slow]", got)
	}
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

func waitOpenConnections(t *testing.T, s *Server, n int) {
	t.Helper()
	waitFor(t, "open connections to drop", func() bool { return s.Stats().OpenConnections == n })
}

// waitFor waits for cond (testkit.Wait).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.Wait(t, what, cond)
}

// Requests left in the input wait while much output is queued for a client that
// half-closed and reads late; they are answered once it drained. The client's
// small receive buffer keeps most of a 16 MiB answer queued in the server, above
// the level (4 MiB) at which the h1 parser leaves further requests unread; the
// third request is sent once the first answer began, so it cannot join the first
// batch. Its handler must not run until the client reads.
func TestH1HalfCloseHeldBackRequests(t *testing.T) {
	t.Parallel()
	ran := make(chan struct{}, 1)
	_, addr := startServer(t, Config{}, func(s *Server) {
		halfCloseRoutes(s)
		s.GET("/mark", func(c *Context) error {
			ran <- struct{}{}
			return c.String(200, "quick")
		})
	})
	c := dialTCP(t, addr, 64<<10)
	io.WriteString(c, "GET /slowbig?mib=16 HTTP/1.1\r\nHost: x\r\n\r\nGET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	if line, err := br.ReadString('\n'); err != nil || line != "HTTP/1.1 200 OK\r\n" {
		t.Fatalf("first answer: %q, %v", line, err)
	}
	io.WriteString(c, "GET /mark HTTP/1.1\r\nHost: x\r\n\r\n")
	c.CloseWrite()
	// Not reading for a while (far longer than /slow's 150 ms) must not get the
	// held request served.
	select {
	case <-ran:
		t.Fatal("the request after a large unread answer was served while that answer was queued")
	case <-time.After(time.Second):
	}
	all, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(all, []byte("HTTP/1.1 200 OK\r\n")); n != 2 {
		t.Fatalf("%d answers after the first, want 2", n)
	}
	if !bytes.HasSuffix(all, []byte("quick")) {
		t.Fatal("the last answer is not /mark's")
	}
	select {
	case <-ran:
	default:
		t.Fatal("/mark's handler did not run")
	}
}

// Shutdown returns only once the answer owed to a half-closed client is written,
// even when that client reads late.
func TestH1HalfCloseShutdownWaitsForWriter(t *testing.T) {
	s, c := halfClosedBigAnswer(t)
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(t.Context()) }()
	// The answer is handed over as the client reads, and it does not read yet: the
	// engine must still count the connection (gnet alone takes up to 500 ms to
	// stop).
	testkit.Window(1500 * time.Millisecond) // a sleep: a check that shutdown does not return: no event marks "not yet" (gnet alone takes up to 500 ms to stop)
	select {
	case err := <-done:
		t.Fatalf("shutdown returned (%v) before the client read the answer", err)
	default:
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: "GET"})
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || n != 8<<20 {
		t.Fatalf("body: %d bytes, %v", n, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// A half-closed client that reads slowly but steadily gets a large answer whole:
// the write deadline bounds each slice, not the whole answer. The client takes
// 32 KiB every 5 ms or slower, so the answer takes longer than the idle timeout,
// while a pause of the test process (a loaded machine) has the whole second of
// that timeout before it cuts the answer short.
func TestH1HalfCloseSlowReader(t *testing.T) {
	const idle = time.Second
	_, addr := startServer(t, Config{IdleTimeout: idle}, halfCloseRoutes)
	c := dialSmallWindow(t, addr)
	io.WriteString(c, "GET /slowbig?mib=8 HTTP/1.1\r\nHost: x\r\n\r\n")
	c.CloseWrite()
	start := time.Now()
	n, err := readSlowly(c, 32<<10, 5*time.Millisecond) // about 6.5 MB/s at most
	total := int(n)
	if err != nil {
		t.Fatalf("after %d bytes: %v", total, err)
	}
	if total < 8<<20 {
		t.Fatalf("got %d bytes in %v, want the whole 8 MiB answer", total, time.Since(start))
	}
	if elapsed := time.Since(start); elapsed < idle {
		t.Logf("read in %v: not much longer than the idle timeout, so this run hardly tested the deadline", elapsed)
	}
}

// An h2c upgrade asked for after the input ended is answered over HTTP/1.1: there
// would be no HTTP/2 connection to switch to.
func TestH1HalfCloseNoUpgrade(t *testing.T) {
	s, addr := startServer(t, Config{}, halfCloseRoutes)
	c := dialSmallWindow(t, addr)
	io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	// /slow is being served; the next request waits in the input.
	waitFor(t, "/slow to run", func() bool { return s.Stats().ActiveRequests == 1 })
	io.WriteString(c, "GET /quick HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n")
	c.CloseWrite()
	out, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := responses(t, out); strings.Join(got, ",") != "slow,quick" {
		t.Fatalf("bodies %q, want [slow quick]", got)
	}
}

// A shutdown whose context ends while a half-closed client does not read closes
// that connection too: its writer does not outlive the server, and the handler,
// waiting to hand over the rest of its answer (the output bound), gets an error
// and returns.
func TestH1HalfCloseShutdownTimeout(t *testing.T) {
	s, c := halfClosedBigAnswer(t)
	waitSocketFull(t, c) // the answer queues up in the server
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); err == nil {
		t.Fatal("shutdown returned nil while an answer was still owed")
	}
	if n := s.Stats().OpenConnections; n != 0 {
		t.Fatalf("%d connections open after shutdown", n)
	}
	waitFor(t, "the handler to return", func() bool { return s.Stats().ActiveRequests == 0 })
	_, err := io.Copy(io.Discard, c) // ends: the server closed the socket
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read: %v", err)
	}
}

// A streamed upload that a slow handler is still reading when the client
// half-closes is read to its end and answered; one cut short fails the handler's
// read and the connection closes.
func TestH1HalfCloseStreamedUpload(t *testing.T) {
	_, addr := startServer(t, Config{}, halfCloseRoutes)
	const size = 4 << 20
	head := "POST /slowcount HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(size) + "\r\n\r\n"
	body := strings.Repeat("u", size)
	t.Run("complete", func(t *testing.T) {
		got := responses(t, halfClose(t, addr, head+body))
		if len(got) != 1 || got[0] != strconv.Itoa(size) {
			t.Fatalf("bodies %q, want [%d]", got, size)
		}
	})
	t.Run("cut short", func(t *testing.T) {
		out := halfClose(t, addr, head+body[:size/2])
		if len(out) > 0 && !bytes.HasPrefix(out, []byte("HTTP/1.1 ")) {
			t.Fatalf("unexpected bytes %q", out[:min(len(out), 64)])
		}
	})
}

// bodyResult is what an upload handler saw: the bytes it read and the error that
// ended its reading (nil at the body's end), and whether its context was cancelled
// once the body was read.
type bodyResult struct {
	n         int64
	err       error
	cancelled bool
}

// uploadRoutes: /read reads the body at once, /slowread a little at a time (the
// body backs up into the engine), /ctx reads it and then waits for its context.
func uploadRoutes(res chan<- bodyResult) func(s *Server) {
	return func(s *Server) {
		s.POST("/read", func(c *Context) error {
			n, err := io.Copy(io.Discard, c.BodyReader())
			res <- bodyResult{n: n, err: err}
			return c.String(200, strconv.FormatInt(n, 10))
		})
		s.POST("/slowread", func(c *Context) error {
			var r bodyResult
			r.n, r.err = readSlowly(c.BodyReader(), 64<<10, 2*time.Millisecond)
			res <- r
			return c.String(200, strconv.FormatInt(r.n, 10))
		})
		s.POST("/ctx", func(c *Context) error {
			n, err := io.Copy(io.Discard, c.BodyReader())
			r := bodyResult{n: n, err: err}
			select {
			case <-c.Context().Done():
				r.cancelled = true
			case <-time.After(3 * time.Second):
			}
			res <- r
			return c.String(200, "x")
		})
	}
}

// An upload whose body the client did not finish before its input ended fails the
// handler's read with ErrBodyAborted, whether the handler kept up with the body or
// not, whether the client half-closed or closed, and wherever the body stopped
// (inside a chunk, inside a chunk-size line). A complete one is read whole, and
// its context is cancelled once the body was read, as net/http does.
func TestH1HalfCloseUploadEnds(t *testing.T) {
	t.Parallel()
	chunked := "POST /slowread HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
		strings.Repeat("1000\r\n"+strings.Repeat("c", 4096)+"\r\n", 512)
	tests := []struct {
		name      string
		raw       string
		fullClose bool
		wantN     int64
		wantErr   error
		cancelled bool
	}{
		{"cut short, handler keeps up", "POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n" + strings.Repeat("a", 1000), false, 1000, ErrBodyAborted, false},
		{"cut short, client closed", "POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n" + strings.Repeat("a", 1000), true, 1000, ErrBodyAborted, false},
		{"cut short inside a chunk", "POST /read HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n8\r\nabc", false, 8, ErrBodyAborted, false},
		{"cut short in a chunk-size line, slow handler", chunked + "10", false, 2 << 20, ErrBodyAborted, false},
		{"complete, slow handler", chunked + "0\r\n\r\n", false, 2 << 20, nil, false},
		{"complete, then waits for its context", "POST /ctx HTTP/1.1\r\nHost: x\r\nContent-Length: 2097152\r\n\r\n" + strings.Repeat("a", 2<<20), true, 2 << 20, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := make(chan bodyResult, 1)
			_, addr := startServer(t, Config{}, uploadRoutes(res))
			c := dialTCP(t, addr, 0)
			io.WriteString(c, tt.raw)
			if tt.wantErr != nil {
				// the handler runs and drains what came
				testkit.Wait(t, "the handler blocked in its read", testkit.Parked("uploadRoutes", ").Read("))
			}
			if tt.fullClose {
				c.Close()
			} else {
				c.CloseWrite()
			}
			var r bodyResult
			select {
			case r = <-res:
			case <-time.After(10 * time.Second):
				t.Fatal("the handler is still waiting for its body")
			}
			if r.n != tt.wantN || !errors.Is(r.err, tt.wantErr) && !(tt.wantErr == nil && r.err == nil) {
				t.Fatalf("handler read %d bytes, error %v; want %d, %v", r.n, r.err, tt.wantN, tt.wantErr)
			}
			if r.cancelled != tt.cancelled {
				t.Fatalf("context cancelled: %v, want %v", r.cancelled, tt.cancelled)
			}
		})
	}
}

// TestH1HalfCloseAfterOutputQueued: the client half-closes only after the server
// queued a large answer that the socket could not take yet (gnet holds it). gnet
// writes its buffer once as it closes and would drop the rest; the engine moves it
// to its own writer instead, so every byte arrives, and a worker's handler still
// waiting to hand over the rest of its answer (the output bound) goes on as the
// client reads. Also when the answer closes the
// connection anyway (Connection: close, HTTP/1.0), for pipelined answers, and for
// an inline route (nothing is owed to a worker then).
func TestH1HalfCloseAfterOutputQueued(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, halfCloseRoutes)
	for _, tc := range []struct {
		name  string
		raw   string
		sizes []int
	}{
		{"keep-alive", "GET /slowbig?mib=16 HTTP/1.1\r\nHost: x\r\n\r\n", []int{16 << 20}},
		{"connection close", "GET /slowbig?mib=16 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", []int{16 << 20}},
		{"HTTP/1.0", "GET /slowbig?mib=16 HTTP/1.0\r\n\r\n", []int{16 << 20}},
		// 3 + 3 MiB: more than the socket takes (the client's receive buffer is
		// 64 KiB, the server's send buffer at most tcp_wmem's 4 MiB), and less than
		// the 4 MiB of queued output that holds the second answer back until the
		// client reads (with 8 + 12 MiB the test waited on that hold whenever the
		// kernel took less than 4 MiB of the first answer).
		{"pipelined", "GET /slowbig?mib=3 HTTP/1.1\r\nHost: x\r\n\r\nGET /slowbig?mib=3 HTTP/1.1\r\nHost: x\r\n\r\n", []int{3 << 20, 3 << 20}},
		{"inline", "GET /inlinebig HTTP/1.1\r\nHost: x\r\n\r\n", []int{16 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialSmallWindow(t, addr)
			if _, err := io.WriteString(c, tc.raw); err != nil {
				t.Fatal(err)
			}
			// The handlers answer and the loop queues the output (up to the
			// output bound: a worker's handler then waits for the client to read).
			waitSocketFull(t, c)
			if err := c.CloseWrite(); err != nil {
				t.Fatal(err)
			}
			all, err := io.ReadAll(c)
			if err != nil {
				t.Fatalf("read until the server closes: %v (got %d bytes)", err, len(all))
			}
			bodies := responses(t, all)
			if len(bodies) != len(tc.sizes) {
				t.Fatalf("%d answers, want %d (%d bytes in all)", len(bodies), len(tc.sizes), len(all))
			}
			for i, b := range bodies {
				if len(b) != tc.sizes[i] {
					t.Fatalf("answer %d: %d bytes, want %d", i+1, len(b), tc.sizes[i])
				}
			}
		})
	}
}

// TestH2HalfCloseEndsAfterQueuedOutput: an HTTP/2 client half-closes while gnet holds
// DATA the socket did not take yet, and its stream still needs window it can no
// longer grant. The client gets the queued output, then the connection closes (the
// stream is aborted, as at any end of input); it must not stay open waiting for a
// WINDOW_UPDATE that cannot come, nor hold a graceful shutdown up. (The engine is
// handed at most 1 MiB of DATA per callback and none while it holds more than 1
// MiB, and the handler's Blob waits with at most 256 KiB of the stream queued, so
// of the 12 MiB window only that and what the socket took are queued at the
// half-close: at least 1 MiB arrives.) The handler's Blob then fails and it
// returns.
func TestH2HalfCloseEndsAfterQueuedOutput(t *testing.T) {
	s, addr := startServer(t, Config{}, halfCloseRoutes)
	c := dialSmallWindow(t, addr)
	_, _ = io.WriteString(c, http2.ClientPreface)
	fr := http2.NewFramer(c, c)
	_ = fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 12 << 20})
	_ = fr.WriteWindowUpdate(0, 12<<20)
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", "x"}, {":path", "/slowbig?mib=16"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndStream: true, EndHeaders: true})
	waitSocketFull(t, c) // the handler answers; DATA queues up to the output bound
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := io.Copy(io.Discard, c)
	if err != nil {
		t.Fatalf("after %d bytes: %v; the connection should have closed", n, err)
	}
	if n < 1<<20 {
		t.Fatalf("%d bytes: the queued DATA was not delivered", n)
	}
	t.Logf("%d bytes delivered after the half-close", n)
	waitFor(t, "the handler to return", func() bool { return s.Stats().ActiveRequests == 0 })
	waitFor(t, "the connection to be released", func() bool { return s.Stats().OpenConnections == 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// waitSocketFull waits until c's receive queue holds more than a few frames or
// a head (an answer's body: HTTP/2's SETTINGS alone sit there while a slow
// handler has not answered yet) and has not changed for 350 ms: the server's
// socket is full, so what it has not sent waits in its own queues, up to their
// bounds, and the loop has queued what it held. Where the queue cannot be read
// (not Linux), the test is skipped.
func waitSocketFull(t *testing.T, c *net.TCPConn) {
	t.Helper()
	if rcvQueued(c) < 0 {
		t.Skip("needs the socket's receive queue (TCP_INFO, Linux)")
	}
	prev, since := 0, time.Now()
	testkit.Wait(t, "the server's socket to fill", func() bool {
		if q := rcvQueued(c); q <= 4<<10 || q != prev {
			prev, since = q, time.Now()
			return false
		}
		return time.Since(since) >= 350*time.Millisecond
	})
}

// halfClosedBigAnswer asks a new server for an 8 MiB answer from a client with a
// small receive window, half-closes, and returns once the handler runs.
func halfClosedBigAnswer(t *testing.T) (*Server, *net.TCPConn) {
	t.Helper()
	// The handler says it runs: a poll of Stats().ActiveRequests could miss
	// its short run on a loaded machine.
	running := make(chan struct{})
	s, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/big8", func(c *Context) error {
			close(running)
			return c.Blob(200, "application/octet-stream", bytes.Repeat([]byte("b"), 8<<20))
		})
	})
	c := dialSmallWindow(t, addr)
	io.WriteString(c, "GET /big8 HTTP/1.1\r\nHost: x\r\n\r\n")
	c.CloseWrite()
	select {
	case <-running:
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not run")
	}
	return s, c
}

// dialSmallWindow dials with a 64 KiB receive buffer set before connecting, so that
// the kernel cannot take a large answer off the server's hands at once.
func dialSmallWindow(t *testing.T, addr string) *net.TCPConn { return dialTCP(t, addr, 64<<10) }

// dialTCP dials addr with a 30 s deadline, setting the receive buffer to rcvbuf
// bytes before connecting unless it is 0. The connection closes when the test ends.
func dialTCP(t *testing.T, addr string, rcvbuf int) *net.TCPConn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if rcvbuf > 0 {
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				serr = setRcvBuf(fd, rcvbuf)
			})
			if err != nil {
				return err
			}
			return serr
		}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return c.(*net.TCPConn)
}
