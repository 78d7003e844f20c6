package enginetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/testkit"
)

// get is a minimal HTTP/1.1 GET for path.
func get(path string) string {
	return "GET " + path + " HTTP/1.1\r\nHost: enginetest\r\n\r\n"
}

// readBody reads one response from br (net/http's parser) and returns its
// status and body.
func readBody(t *testing.T, br *bufio.Reader) (int, string) {
	t.Helper()
	status, body, err := readAnswer(br)
	if err != nil {
		t.Fatal(err)
	}
	return status, body
}

// readAnswer reads one response from br: its status and body.
func readAnswer(br *bufio.Reader) (int, string, error) {
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, "", fmt.Errorf("read response: %w", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, "", fmt.Errorf("read body: %w", err)
	}
	return resp.StatusCode, string(b), nil
}

// expectClosed reads until the server closes c (EOF or reset) within d.
func expectClosed(t *testing.T, c net.Conn, br io.Reader, d time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	if br == nil {
		br = c
	}
	_, err := io.Copy(io.Discard, br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server did not close the connection within %v", d)
	}
}

// testPipelining: 100 requests in one write, inline and worker routes
// alternating, are answered in order.
func testPipelining(t *testing.T, s *server) {
	c := s.dial(t)
	var req strings.Builder
	const n = 100
	for i := range n {
		if i%2 == 0 {
			req.WriteString(get("/inline/" + strconv.Itoa(i)))
		} else {
			req.WriteString(get("/echo/" + strconv.Itoa(i)))
		}
	}
	if _, err := c.Write([]byte(req.String())); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for i := range n {
		status, body := readBody(t, br)
		if status != 200 || !strings.HasSuffix(body, "/"+strconv.Itoa(i)) {
			t.Fatalf("response %d: %d %q", i, status, body)
		}
	}
}

// testHalfClose: the client sends two requests and shuts down its sending
// side while a handler still serves the first: both answers come, then the
// server closes.
func testHalfClose(t *testing.T, s *server) {
	c := s.dial(t)
	if _, err := c.Write([]byte(get("/slow") + get("/echo/after"))); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	if status, body := readBody(t, br); status != 200 || body != "slow" {
		t.Fatalf("first answer: %d %q", status, body)
	}
	if status, body := readBody(t, br); status != 200 || body != "/echo/after" {
		t.Fatalf("second answer: %d %q", status, body)
	}
	expectClosed(t, c, br, 5*time.Second)
	testkit.Wait(t, "the connection leaves the engine", func() bool { return s.eng.OpenConnections() == 0 })
}

// outputBound is what a client that does not read may have the server
// produce for it: the kernel's socket buffers on loopback (a few MiB), the
// engine's and the protocol's bounds, and one answer in progress. Without a
// bound every answer is produced and buffered.
const outputBound = 24 << 20

// testOutputBound: a client pipelines 64 requests for 1 MiB each and does not
// read: the handlers stop being run once the output bound is reached; when it
// reads, every answer arrives.
func testOutputBound(t *testing.T, s *server) {
	c := s.dial(t)
	const n, size = 64, 1 << 20
	var req strings.Builder
	for range n {
		req.WriteString(get("/big?n=" + strconv.Itoa(size)))
	}
	if _, err := c.Write([]byte(req.String())); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // a sleep: long enough for an unbounded server to have produced every answer
	if got := s.h.served.Load() * size; got > outputBound {
		t.Fatalf("a client that read nothing had %d MiB of answers produced for it (bound %d MiB)", got>>20, outputBound>>20)
	} else {
		t.Logf("answers produced for a client that did not read: %d MiB", got>>20)
	}
	br := bufio.NewReaderSize(c, 64<<10)
	for i := range n {
		if status, body := readBody(t, br); status != 200 || len(body) != size {
			t.Fatalf("answer %d: %d, %d bytes", i, status, len(body))
		}
	}
}

// testSlowStream: a streamed answer of 64 MiB to a client that does not read
// makes the handler's writes wait at the bound; once it reads, all arrives.
func testSlowStream(t *testing.T, s *server) {
	c := s.dial(t)
	const size = 64 << 20
	if _, err := c.Write([]byte(get("/stream?n=" + strconv.Itoa(size)))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // a sleep: long enough for an unbounded handler to have streamed it all
	if got := s.h.streamed.Load(); got > outputBound {
		t.Fatalf("a handler streamed %d MiB to a client that read nothing (bound %d MiB)", got>>20, outputBound>>20)
	}
	br := bufio.NewReaderSize(c, 64<<10)
	if status, body := readBody(t, br); status != 200 || len(body) != size {
		t.Fatalf("streamed answer: %d, %d bytes", status, len(body))
	}
}

// testHijack: a handler hijacks the connection after a pipelined request was
// answered; the bytes the client sent after the request reach the hijacker.
func testHijack(t *testing.T, s *server) {
	c := s.dial(t)
	if _, err := c.Write([]byte(get("/echo/first") + get("/hijack") + "line-one\n")); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	if status, body := readBody(t, br); status != 200 || body != "/echo/first" {
		t.Fatalf("answer before the hijack: %d %q", status, body)
	}
	for _, want := range []string{"hijacked\n", "line-one\n"} {
		line, err := br.ReadString('\n')
		if err != nil || line != want {
			t.Fatalf("from the hijacker: %q, %v; want %q", line, err, want)
		}
	}
	expectClosed(t, c, br, 5*time.Second)
	testkit.Wait(t, "the hijacked connection leaves the engine", func() bool { return s.eng.OpenConnections() == 0 })
}

// testDrain: Drain closes the listener (new connections are refused), closes
// idle connections, and lets a request in flight finish before its
// connection closes.
func testDrain(t *testing.T, s *server) {
	idle := s.dial(t)
	if _, err := idle.Write([]byte(get("/echo/idle"))); err != nil {
		t.Fatal(err)
	}
	ibr := bufio.NewReader(idle)
	readBody(t, ibr)
	busy := s.dial(t)
	if _, err := busy.Write([]byte(get("/gate"))); err != nil {
		t.Fatal(err)
	}
	testkit.Wait(t, "the handler runs", func() bool { return s.h.entered.Load() == 1 })
	if n := s.eng.Drain(); n != 2 {
		t.Errorf("Drain reports %d connections open, want 2", n)
	}
	expectClosed(t, idle, ibr, 5*time.Second)
	if nc, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
		nc.Close()
		t.Fatal("a new connection was accepted after Drain: the listener is still open")
	}
	s.h.release()
	bbr := bufio.NewReader(busy)
	if status, body := readBody(t, bbr); status != 200 || body != "released" {
		t.Fatalf("the request in flight: %d %q", status, body)
	}
	expectClosed(t, busy, bbr, 5*time.Second)
	testkit.Wait(t, "every connection closed", func() bool { return s.eng.OpenConnections() == 0 })
}

// testIdleTimeout: a keep-alive connection with nothing in progress closes
// after the idle timeout (300 ms here), not before.
func testIdleTimeout(t *testing.T, s *server) {
	c := s.dial(t)
	if _, err := c.Write([]byte(get("/echo/x"))); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	readBody(t, br)
	begin := time.Now()
	expectClosed(t, c, br, 5*time.Second)
	if d := time.Since(begin); d < 200*time.Millisecond {
		t.Fatalf("closed after %v, before the idle timeout (300 ms)", d)
	}
}

// testReadHeaderTimeout: a request head that stays incomplete is cut off after
// the read header timeout (300 ms here), while the client trickles bytes.
func testReadHeaderTimeout(t *testing.T, s *server) {
	c := s.dial(t)
	begin := time.Now()
	if _, err := c.Write([]byte("GET /echo/x HTTP/1.1\r\nHost: enginetest\r\n")); err != nil {
		t.Fatal(err)
	}
	go func() { // a slowloris: a header byte now and then
		for range 40 {
			time.Sleep(100 * time.Millisecond) // a sleep: the slowloris's pace
			if _, err := c.Write([]byte("X")); err != nil {
				return
			}
		}
	}()
	expectClosed(t, c, nil, 5*time.Second)
	if d := time.Since(begin); d < 200*time.Millisecond || d > 3*time.Second {
		t.Fatalf("an incomplete head was cut off after %v (read header timeout 300 ms)", d)
	}
}

// testPauseResume: an upload to a handler that does not read yet stops the
// client by TCP flow control (the engine paused reading); once the handler
// reads, reading resumes and the whole body arrives.
func testPauseResume(t *testing.T, s *server) {
	c := s.dial(t)
	const size = 64 << 20
	head := "POST /upload HTTP/1.1\r\nHost: enginetest\r\nContent-Length: " + strconv.Itoa(size) + "\r\n\r\n"
	if _, err := c.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	testkit.Wait(t, "the handler runs", func() bool { return s.h.entered.Load() == 1 })
	chunk := make([]byte, 256<<10)
	sent := 0
	for sent < size {
		_ = c.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
		n, err := c.Write(chunk[:min(len(chunk), size-sent)])
		sent += n
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatalf("write after %d bytes: %v", sent, err)
		}
	}
	t.Logf("the client could send %d KiB before the server stopped reading", sent>>10)
	if sent >= 48<<20 {
		t.Fatalf("the server took %d MiB for a handler that read nothing: reading was not paused", sent>>20)
	}
	s.h.release()
	_ = c.SetWriteDeadline(time.Now().Add(20 * time.Second))
	for sent < size {
		n, err := c.Write(chunk[:min(len(chunk), size-sent)])
		sent += n
		if err != nil {
			t.Fatalf("write after resuming, at %d bytes: %v", sent, err)
		}
	}
	if status, body := readBody(t, bufio.NewReader(c)); status != 200 || body != strconv.Itoa(size) {
		t.Fatalf("upload answer: %d %q", status, body)
	}
}

// testManyIdle: many idle connections are held at once, each still served:
// 1,000 in this process (two descriptors each); RunManyIdle holds 10,000 with
// the client in a child process.
func testManyIdle(t *testing.T, s *server) {
	n := 1000
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range n {
		c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	testkit.Wait(t, fmt.Sprintf("%d connections open", n), func() bool { return s.eng.OpenConnections() == n })
	for i := 0; i < n; i += 97 {
		c := conns[i]
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write([]byte(get("/inline/" + strconv.Itoa(i)))); err != nil {
			t.Fatal(err)
		}
		if status, body := readBody(t, bufio.NewReader(c)); status != 200 || body != "/inline/"+strconv.Itoa(i) {
			t.Fatalf("connection %d: %d %q", i, status, body)
		}
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	testkit.Wait(t, "every connection closed", func() bool { return s.eng.OpenConnections() == 0 })
}

// testBlockingHandler: a handler that blocks holds up no other connection.
func testBlockingHandler(t *testing.T, s *server) {
	blocked := s.dial(t)
	if _, err := blocked.Write([]byte(get("/gate"))); err != nil {
		t.Fatal(err)
	}
	testkit.Wait(t, "the handler runs", func() bool { return s.h.entered.Load() == 1 })
	for i := range 10 {
		c := s.dial(t)
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		path := "/echo/" + strconv.Itoa(i)
		if i%2 == 0 {
			path = "/inline/" + strconv.Itoa(i)
		}
		if _, err := c.Write([]byte(get(path))); err != nil {
			t.Fatal(err)
		}
		if status, body := readBody(t, bufio.NewReader(c)); status != 200 || body != path {
			t.Fatalf("while a handler blocks: %d %q", status, body)
		}
	}
	s.h.release()
	if status, body := readBody(t, bufio.NewReader(blocked)); status != 200 || body != "released" {
		t.Fatalf("the blocked handler's answer: %d %q", status, body)
	}
}

// testStop: Stop closes open connections, and a second Stop returns nil.
func testStop(t *testing.T, s *server) {
	c := s.dial(t)
	if _, err := c.Write([]byte(get("/echo/x"))); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	readBody(t, br)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.eng.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	expectClosed(t, c, br, 5*time.Second)
	if _, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
		t.Fatal("the listener is still open after Stop")
	}
}
