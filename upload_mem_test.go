package celeris

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// Memory under a fast streamed upload: reading a request body must buffer no more
// than a small, fixed amount per connection however fast the client sends (the
// engine's MaxBufferedInput and the h1 body pipe; HTTP/2's flow-control windows).
// The server runs in a child process (this test binary again) so that the RSS
// measured is the server's alone.

// procStatus reads a field (in bytes) of /proc/PID/status, e.g. VmRSS or VmHWM.
func procStatus(t *testing.T, pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field+":") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Skip("no " + field)
	return 0
}

// TestUploadServerProcess is the server half of TestUploadStreamsWithBoundedMemory,
// run in a child process so that its memory is measured alone. Both routes count
// the body as a stream; /count-inline is an inline route.
func TestUploadServerProcess(t *testing.T) {
	if os.Getenv("CELERIS_UPLOAD_SERVER") != "1" {
		t.Skip("child process of TestUploadStreamsWithBoundedMemory")
	}
	count := func(c *Context) error {
		n, err := io.Copy(io.Discard, c.BodyReader())
		if err != nil {
			return err
		}
		return c.String(200, strconv.FormatInt(n, 10))
	}
	_, addr := startServer(t, Config{MaxRequestBodySize: 2 << 30}, func(s *Server) {
		s.POST("/count", count)
		s.POST("/count-inline", count).Inline()
	})
	runtime.GC()
	debug.FreeOSMemory()
	fmt.Println("ADDR", addr)
	// Serve until the parent closes stdin; each line it sends asks for the Go
	// runtime's view of the memory, for the log.
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		fmt.Printf("STATS %d heap in use %.1f MB, idle not released %.1f MB, stacks %.1f MB, runtime %.1f MB, %d GCs\n",
			m.TotalAlloc, mb(int64(m.HeapInuse)), mb(int64(m.HeapIdle-m.HeapReleased)), mb(int64(m.StackSys)),
			mb(int64(m.MSpanSys+m.MCacheSys+m.BuckHashSys+m.GCSys+m.OtherSys)), m.NumGC)
	}
}

type zeroReader struct{ n int64 }

func (z *zeroReader) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > z.n {
		n = z.n
	}
	clear(p[:n])
	z.n -= n
	return int(n), nil
}

// uploadServer starts the child server process; stats asks it for the bytes it
// allocated so far and a summary of its memory, stop ends it.
func uploadServer(t *testing.T) (addr string, pid int, stats func() (int64, string), stop func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestUploadServerProcess$", "-test.v"}, strings.Fields(os.Getenv("CELERIS_CHILD_ARGS"))...)...)
	cmd.Env = append(os.Environ(), "CELERIS_UPLOAD_SERVER=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop = func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		stop()
		t.Fatal("server process gave no address")
	}
	lines := make(chan string, 1)
	go func() {
		for sc.Scan() {
			if l, ok := strings.CutPrefix(sc.Text(), "STATS "); ok {
				lines <- l
			}
		}
		close(lines)
	}()
	stats = func() (int64, string) {
		if _, err := io.WriteString(stdin, "stats\n"); err != nil {
			t.Fatal(err)
		}
		select {
		case l := <-lines:
			n, text, _ := strings.Cut(l, " ")
			alloc, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				t.Fatalf("stats %q", l)
			}
			return alloc, text
		case <-time.After(10 * time.Second):
			t.Fatal("server process gave no stats")
			return 0, ""
		}
	}
	return addr, cmd.Process.Pid, stats, stop
}

// h1Uploader sends uploads over one HTTP/1.1 connection (keep-alive).
type h1Uploader struct {
	c       net.Conn
	bw      *bufio.Writer
	br      *bufio.Reader
	chunked bool
}

func (u *h1Uploader) upload(path string, size int64) (string, error) {
	_ = u.c.SetDeadline(time.Now().Add(2 * time.Minute))
	if u.chunked {
		fmt.Fprintf(u.bw, "POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", path)
		buf := make([]byte, 32<<10)
		for sent := int64(0); sent < size; {
			n := min(int64(len(buf)), size-sent)
			fmt.Fprintf(u.bw, "%x\r\n", n)
			u.bw.Write(buf[:n])
			u.bw.WriteString("\r\n")
			sent += n
		}
		u.bw.WriteString("0\r\n\r\n")
	} else {
		fmt.Fprintf(u.bw, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", path, size)
		if _, err := io.Copy(u.bw, &zeroReader{n: size}); err != nil {
			return "", err
		}
	}
	if err := u.bw.Flush(); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(u.br, nil)
	if err != nil {
		return "", err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.Status + " " + string(body), err
}

// TestUploadStreamsWithBoundedMemory: a 256 MiB upload sent as fast as loopback
// allows, then 100 uploads of 1 MiB on the same connection (a per-request leak
// would add up), raise the server's peak RSS by less than 16 MiB, and allocate
// less than 32 and 64 MiB; for HTTP/1.1 with Content-Length and chunked, and
// HTTP/2 with and without content-length, each to a worker route and an inline
// one.
func TestUploadStreamsWithBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 2.8 GiB")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory makes RSS meaningless")
	}
	const (
		// 256 MiB is 16 times the RSS bound and 8 times the allocation bound:
		// a server that buffered the body, or allocated per chunk (300-450 MB
		// per GiB over HTTP/1.1 without the streaming body), fails either
		// bound by far.
		big           = 256 << 20
		small         = 1 << 20
		reps          = 100
		limit         = 16 << 20 // RSS growth
		maxAlloc      = 32 << 20 // bytes allocated during the big upload
		maxAllocSmall = 64 << 20 // bytes allocated during the 100 uploads of 1 MiB
	)
	for _, proto := range []string{"h1", "h1-chunked", "h2", "h2-nolength"} {
		for _, path := range []string{"/count", "/count-inline"} {
			t.Run(proto+path, func(t *testing.T) {
				addr, pid, stats, stop := uploadServer(t)
				defer stop()
				var upload func(path string, size int64) (string, error)
				switch proto {
				case "h2", "h2-nolength":
					tr := &http2.Transport{
						AllowHTTP: true,
						DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
							var d net.Dialer
							return d.DialContext(ctx, network, addr)
						},
					}
					defer tr.CloseIdleConnections()
					client := &http.Client{Transport: tr, Timeout: 2 * time.Minute}
					upload = func(path string, size int64) (string, error) {
						req, _ := http.NewRequest("POST", "http://"+addr+path, io.NopCloser(&zeroReader{n: size}))
						req.ContentLength = size
						if proto == "h2-nolength" {
							req.ContentLength = -1 // no content-length field
						}
						resp, err := client.Do(req)
						if err != nil {
							return "", err
						}
						body, err := io.ReadAll(resp.Body)
						resp.Body.Close()
						return resp.Status + " " + string(body), err
					}
				default:
					c, err := net.Dial("tcp", addr)
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					u := &h1Uploader{c: c, bw: bufio.NewWriterSize(c, 64<<10), br: bufio.NewReader(c), chunked: proto == "h1-chunked"}
					upload = u.upload
				}
				// The peak is measured from here (clear_refs 5 resets VmHWM).
				_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
				before := procStatus(t, pid, "VmRSS")
				allocBefore, _ := stats()
				start := time.Now()
				check := func(size int64) {
					got, err := upload(path, size)
					if want := "200 OK " + strconv.FormatInt(size, 10); err != nil || got != want {
						t.Fatalf("upload of %d bytes: %q, %v; want %q", size, got, err, want)
					}
				}
				check(big)
				afterBig := procStatus(t, pid, "VmHWM")
				elapsed := time.Since(start)
				allocBig, _ := stats()
				for range reps {
					check(small)
				}
				peak := procStatus(t, pid, "VmHWM")
				alloc, summary := stats()
				t.Logf("server RSS before %.1f MB; peak %.1f MB after 256 MiB (%v, %.1f MB allocated), %.1f MB after %d more uploads of 1 MiB (%.1f MB allocated): growth %.1f MB; Go: %s",
					mb(before), mb(afterBig), elapsed.Round(time.Millisecond), mb(allocBig-allocBefore),
					mb(peak), reps, mb(alloc-allocBig), mb(peak-before), summary)
				if peak-before > limit {
					t.Errorf("server RSS grew by %.1f MB, want < %.1f MB", mb(peak-before), mb(limit))
				}
				// Garbage raises the heap, hence the RSS, by GOGC's measure: this
				// measures it too, without the noise of the RSS. Buffers are reused,
				// within a request and from one request to the next.
				if a := allocBig - allocBefore; a > maxAlloc {
					t.Errorf("the server allocated %.1f MB during the upload of 256 MiB, want < %.1f MB", mb(a), mb(maxAlloc))
				}
				if a := alloc - allocBig; a > maxAllocSmall {
					t.Errorf("the server allocated %.1f MB during %d uploads of 1 MiB, want < %.1f MB", mb(a), reps, mb(maxAllocSmall))
				}
			})
		}
	}
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// TestInlineRouteLargeBody: an inline route gets every body whole and in order,
// whatever its size and framing: buffered up to 64 KiB, streamed past it (its
// handler then runs on a worker), with the switch in the middle of a chunked body
// or an HTTP/2 body without content-length.
func TestInlineRouteLargeBody(t *testing.T) {
	t.Parallel()
	body := make([]byte, 3<<20)
	for i := range body {
		body[i] = byte(i*7 + i>>11)
	}
	_, addr := startServer(t, Config{MaxRequestBodySize: 8 << 20}, func(s *Server) {
		s.POST("/inline-sum", func(c *Context) error {
			got, err := io.ReadAll(c.BodyReader())
			if err != nil {
				return err
			}
			if !bytes.Equal(got, body[:len(got)]) {
				return c.String(200, "mismatch")
			}
			return c.String(200, strconv.Itoa(len(got)))
		}).Inline()
	})
	forEachProto(t, func(t *testing.T, client *http.Client, proto string) {
		for _, size := range []int{1, 64 << 10, 64<<10 + 1, 200_000, 3 << 20} {
			for _, known := range []bool{true, false} {
				var r io.Reader = bytes.NewReader(body[:size])
				if !known {
					r = io.MultiReader(r) // no length: chunked, or no content-length
				}
				resp, err := client.Post("http://"+addr+"/inline-sum", "application/octet-stream", r)
				if err != nil {
					t.Fatal(err)
				}
				wantProto(t, resp, proto)
				if got := bodyString(t, resp); got != strconv.Itoa(size) {
					t.Fatalf("%d bytes, length known %v: answer %q", size, known, got)
				}
			}
		}
	})
}

// TestUploadToEchoWithoutReading: a client that streams a body to a handler that
// echoes it, and never reads the echo, is held back by TCP once the server's
// buffers are full: the engine pauses reading even while output is pending (it
// did not, and buffered the whole upload: 1.6 GB of RSS after 5 s).
func TestUploadToEchoWithoutReading(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{MaxRequestBodySize: 2 << 30}, func(s *Server) {
		s.POST("/echo", func(c *Context) error {
			w, err := c.Stream(200, "application/octet-stream")
			if err != nil {
				return err
			}
			_, err = io.Copy(w, c.BodyReader())
			return err
		})
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const size, most = 1 << 30, 64 << 20 // kernel buffers and the server's few MiB
	fmt.Fprintf(c, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size)
	buf := make([]byte, 64<<10)
	sent := 0
	_ = c.SetWriteDeadline(time.Now().Add(3 * time.Second))
	for sent < size {
		n, err := c.Write(buf)
		sent += n
		if err != nil || sent > most {
			break
		}
	}
	if sent > most {
		t.Fatalf("the server took more than %d MB of a body whose echo nobody reads", most>>20)
	}
	t.Logf("the server took %.1f MB, then TCP held the client back", mb(int64(sent)))
}
