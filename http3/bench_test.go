package celerish3_test

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	celerish3 "github.com/celeris-dev/celeris/http3"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/quic-go/quic-go/http3"
)

// The benchmark's servers run in a child process (this test binary, re-run as
// TestBenchServer), so that /proc gives the server's CPU time alone; the
// client, quic-go's HTTP/3 client, runs here at a fixed concurrency.
const benchServerEnv = "CELERISH3_BENCH_SERVER"

// TestBenchServer is the child process of BenchmarkGET: with
// CELERISH3_BENCH_SERVER set to celeris, quic-go or quic-go-empty, it serves
// BenchmarkGET's routes over HTTP/3 on 127.0.0.1, prints its UDP address, and exits when stdin closes;
// CELERISH3_BENCH_SERVER_CPUPROFILE names a file for its CPU profile.
func TestBenchServer(t *testing.T) {
	kind := os.Getenv(benchServerEnv)
	if kind == "" {
		t.Skip("the child process of BenchmarkGET")
	}
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert.TLS}}
	var addr string
	switch kind {
	case "celeris":
		s := celeris.New(celeris.Config{Addr: "127.0.0.1:0", TLSAddr: "127.0.0.1:0", TLSConfig: tc, Engine: celeris.EngineStd})
		s.GET("/bench", func(c *celeris.Context) error { return c.String(200, "OK") })
		s.GET("/json", func(c *celeris.Context) error { return c.JSON(200, benchMessage{Message: "Hello, World!"}) })
		s.GET("/users/:id/posts/:postId", func(c *celeris.Context) error {
			return c.String(200, "user="+c.Param("id")+" post="+c.Param("postId"))
		})
		h := celerish3.Enable(s, celerish3.Config{})
		go func() { _ = s.Start() }()
		a, err := h.WaitReady()
		if err != nil {
			t.Fatal(err)
		}
		addr = a.String()
	case "quic-go", "quic-go-empty":
		mux := http.NewServeMux()
		mux.HandleFunc("GET /bench", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "OK")
		})
		mux.HandleFunc("GET /json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(benchMessage{Message: "Hello, World!"})
		})
		mux.HandleFunc("GET /users/{id}/posts/{postId}", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "user="+r.PathValue("id")+" post="+r.PathValue("postId"))
		})
		var handler http.Handler = mux
		if kind == "quic-go-empty" {
			// The floor: quic-go's server answering 200 with no body and no
			// routing, whatever the request.
			handler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
		}
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http3.Server{TLSConfig: http3.ConfigureTLSConfig(tc), Handler: handler}
		go func() { _ = srv.Serve(pc) }()
		addr = pc.LocalAddr().String()
	}
	if path := os.Getenv(benchServerEnv + "_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Println("ADDR", addr)
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// cpuTime is a process's user + system CPU time from /proc (Linux).
func cpuTime(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(fields) < 13 {
		return 0, false
	}
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	const hz = 100 // USER_HZ
	return time.Duration(ut+st) * time.Second / hz, true
}

// BenchmarkGET: GET /bench, /json and /users/7/posts/9 over HTTP/3 from
// quic-go's client at a fixed concurrency (8 goroutines, one connection),
// against Celeris's HTTP/3 server, quic-go's own http3.Server behind net/http
// (the same routes on a ServeMux), and quic-go's server with an empty handler
// (quic-go-empty: the floor, what QUIC and quic-go's HTTP/3 layer cost). The
// server process runs with GOMAXPROCS=1; the benchmark reports its CPU time
// per request (server-µs/op) besides the wall time. With -count, the kinds
// interleave, so that a shared machine's noise hits them alike.
func BenchmarkGET(b *testing.B) {
	for _, route := range []struct{ name, path string }{{name: "bench", path: "/bench"}, {name: "json", path: "/json"}, {name: "posts", path: "/users/7/posts/9"}} {
		for _, kind := range []string{"celeris", "quic-go", "quic-go-empty"} {
			b.Run(route.name+"/"+kind, func(b *testing.B) { benchGET(b, kind, route.path) })
		}
	}
}

// benchMessage is /json's body.
type benchMessage struct {
	Message string `json:"message"`
}

func benchGET(b *testing.B, kind, path string) {
	pid, addr := startBenchServer(b, kind)
	tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.Close()
	client := &http.Client{Transport: tr}
	url := "https://" + addr + path
	do := func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	for i := 0; i < 100; i++ { // connect and warm up
		if err := do(); err != nil {
			b.Fatal(err)
		}
	}
	const concurrency = 8
	before, ok := cpuTime(pid)
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for g := 0; g < concurrency; g++ {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := do(); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	if after, ok2 := cpuTime(pid); ok && ok2 {
		b.ReportMetric(float64((after-before).Microseconds())/float64(b.N), "server-µs/op")
	}
}

// startBenchServer starts the child server process of kind and returns its pid
// and UDP address; it ends with the benchmark.
func startBenchServer(b *testing.B, kind string) (int, string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchServer$", "-test.count=1")
	cmd.Env = append(os.Environ(), benchServerEnv+"="+kind, "GOMAXPROCS=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	addr := ""
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			addr = a
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if addr == "" {
		b.Fatal("the server process printed no address")
	}
	return cmd.Process.Pid, addr
}

// rss is a process's resident set size from /proc (Linux).
func rss(pid int) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// BenchmarkIdleConnMemory: the server process's RSS per idle HTTP/3 connection
// (one request answered, then idle), for Celeris and for quic-go's
// http3.Server; 200 connections per run, whatever b.N is.
func BenchmarkIdleConnMemory(b *testing.B) {
	const conns = 200
	for _, kind := range []string{"celeris", "quic-go"} {
		b.Run(kind, func(b *testing.B) {
			pid, addr := startBenchServer(b, kind)
			var trs []*http3.Transport
			defer func() {
				for _, tr := range trs {
					_ = tr.Close()
				}
			}()
			get := func() {
				tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
				trs = append(trs, tr)
				resp, err := (&http.Client{Transport: tr}).Get("https://" + addr + "/bench")
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			for i := 0; i < 10; i++ {
				get() // warm up the process
			}
			time.Sleep(200 * time.Millisecond)
			before, ok := rss(pid)
			for i := 0; i < conns; i++ {
				get()
			}
			time.Sleep(500 * time.Millisecond)
			after, ok2 := rss(pid)
			if !ok || !ok2 {
				b.Skip("no /proc")
			}
			b.ReportMetric(float64(after-before)/conns/1024, "KiB/conn")
			for i := 0; i < b.N; i++ {
			}
		})
	}
}
