package celeris

import (
	"bufio"
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
)

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
// run in a child process so that its memory is measured alone.
func TestUploadServerProcess(t *testing.T) {
	if os.Getenv("CELERIS_UPLOAD_SERVER") != "1" {
		t.Skip("child process of TestUploadStreamsWithBoundedMemory")
	}
	_, addr := startServer(t, Config{MaxRequestBodySize: 2 << 30}, func(s *Server) {
		s.POST("/count", func(c *Context) error {
			n, err := io.Copy(io.Discard, c.BodyReader())
			if err != nil {
				return err
			}
			return c.String(200, strconv.FormatInt(n, 10))
		})
	})
	runtime.GC()
	debug.FreeOSMemory()
	fmt.Println("ADDR", addr)
	_, _ = io.Copy(io.Discard, os.Stdin) // serve until the parent closes stdin
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

// TestUploadStreamsWithBoundedMemory: a 1 GiB upload to a handler that reads it as a
// stream raises the process's RSS (client and server together) by less than 32 MB.
func TestUploadStreamsWithBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 1 GiB")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory makes RSS meaningless")
	}
	const size = 1 << 30
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestUploadServerProcess$", "-test.v"}, strings.Fields(os.Getenv("CELERIS_CHILD_ARGS"))...)...)
	cmd.Env = append(os.Environ(), "CELERIS_UPLOAD_SERVER=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	var addr string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		t.Fatal("server process gave no address")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	pid := cmd.Process.Pid
	before := procStatus(t, pid, "VmRSS")
	for _, chunked := range []bool{false, true} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		bw := bufio.NewWriterSize(c, 64<<10)
		if chunked {
			fmt.Fprintf(bw, "POST /count HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
			buf := make([]byte, 32<<10)
			for sent := 0; sent < size; sent += len(buf) {
				fmt.Fprintf(bw, "%x\r\n", len(buf))
				bw.Write(buf)
				bw.WriteString("\r\n")
			}
			bw.WriteString("0\r\n\r\n")
		} else {
			fmt.Fprintf(bw, "POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size)
			if _, err := io.Copy(bw, &zeroReader{n: size}); err != nil {
				t.Fatal(err)
			}
		}
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		c.Close()
		if string(body) != strconv.Itoa(size) {
			t.Fatalf("chunked=%v: counted %q", chunked, body)
		}
	}
	peak := procStatus(t, pid, "VmHWM") // the server's peak RSS
	growth := peak - before
	t.Logf("server RSS before %d MB, peak %d MB, growth %d MB", before>>20, peak>>20, growth>>20)
	if growth > 32<<20 {
		t.Fatalf("RSS grew by %d MB during a 1 GiB streamed upload, want < 32 MB", growth>>20)
	}
}
