// Command wsload drives a WebSocket echo server that runs by hand (say the
// demo under a profiler, or with GODEBUG=gctrace=1) with the suite's driver:
// conns connections, each sending a size-byte binary message and waiting for
// its echo, for a while; it prints round trips per second, the latency
// percentiles and, with -pid, the server's CPU time and RSS over the window.
//
//	taskset -c 0 env GOMAXPROCS=1 ./demo -addr 127.0.0.1:9000 -bare -loops 1 -cpuprofile ws.pprof &
//	taskset -c 1 wsload -addr 127.0.0.1:9000 -conns 10000 -size 16384 -duration 5s -pid $!
//
// With -idle the connections make one round trip each and then stay quiet.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/catalog"
	"github.com/celeris-dev/celeris/bench/internal/load"
	"github.com/celeris-dev/celeris/bench/internal/procstat"
	"github.com/celeris-dev/celeris/bench/internal/wsclient"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "server address")
	path := flag.String("path", catalog.WSPath, "WebSocket path")
	conns := flag.Int("conns", 100, "connections")
	size := flag.Int("size", 64, "message size in bytes")
	warmup := flag.Duration("warmup", 500*time.Millisecond, "load before measuring")
	duration := flag.Duration("duration", 5*time.Second, "measured time")
	idle := flag.Bool("idle", false, "one round trip per connection, then quiet")
	pid := flag.Int("pid", 0, "server process id, for its CPU time and RSS")
	flag.Parse()
	if *conns < 1 || *size < 0 || *duration <= 0 {
		fmt.Fprintln(os.Stderr, "wsload: -conns >= 1, -size >= 0, -duration > 0")
		os.Exit(2)
	}
	msg := make([]byte, *size)
	for i := range msg {
		msg[i] = 'a' + byte(i%26)
	}
	if err := wsclient.Echo(*addr, *path, msg, 5*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "wsload: echo check:", err)
		os.Exit(1)
	}
	rec := load.NewRecorder(runtime.GOMAXPROCS(0))
	pool := load.NewWSPool(load.Target{Addr: *addr, Path: *path, Message: msg}, rec, runtime.GOMAXPROCS(0), *idle)
	defer pool.Stop()
	t0 := time.Now()
	pool.Grow(*conns)
	fmt.Printf("dialled %d connections in %v (%d failed)\n", *conns, time.Since(t0).Round(time.Millisecond), pool.Failed())
	if *idle {
		pool.WaitAnswered(30 * time.Second)
	}
	time.Sleep(*warmup)
	hist := load.NewHistogram()
	rec.Drain(hist)
	hist.Reset()
	cpu0, _ := procstat.ProcessCPU(*pid)
	self0 := procstat.SelfCPU()
	start := time.Now()
	time.Sleep(*duration)
	c := rec.Drain(hist)
	el := time.Since(start)
	cpu1, _ := procstat.ProcessCPU(*pid)
	self := procstat.SelfCPU() - self0
	p := load.PercentilesOf(hist)
	fmt.Printf("%d round trips in %v: %.0f/s, p50 %v p95 %v p99 %v, loader CPU %.0f%%, %d connections failed\n",
		c.OK, el.Round(time.Millisecond), float64(c.OK)/el.Seconds(), p.P50, p.P95, p.P99,
		100*self.Seconds()/el.Seconds(), pool.Failed())
	if err := pool.FirstError(); err != nil {
		fmt.Println("first failure:", err)
	}
	if *pid > 0 {
		rss, _ := procstat.RSS(*pid)
		srv := cpu1 - cpu0
		per := "—"
		if srv > 0 {
			per = fmt.Sprintf("%.0f", float64(c.OK)/srv.Seconds())
		}
		fmt.Printf("server: %v CPU, %s round trips per CPU-s, RSS %.1f MB\n", srv, per, float64(rss)/1e6)
	}
}
