// Command grpcbench compares four ways of serving gRPC, in RPCs (or streamed
// messages) per server CPU-second (docs/BENCHMARKS.md §8):
//
//   - celeris-native: the same service registered on celerisgrpc.NewServer()
//     (github.com/celeris-dev/celeris/grpc), mounted with s.POST("/*rpc",
//     celeris.Adapt(srv)) on the same Celeris configuration as celeris: Adapt
//     takes its native path (no ServeHTTP);
//   - celeris: grpc-go's grpc.Server mounted with s.POST("/*rpc", celeris.Adapt(gs))
//     on the gnet engine, over h2c (grpc-go's ServeHTTP transport);
//   - grpc: grpc-go's own server, gs.Serve on a net.Listener (its own HTTP/2);
//   - nethttp: gs as an http.Handler (ServeHTTP) under net/http's server with
//     Protocols HTTP1 + UnencryptedHTTP2 (h2c with prior knowledge).
//
// Every server runs grpc-go's interop test service (interop.NewTestServer), so no
// code generation is needed. Two scenarios: unary (UnaryCall, small payloads) and
// stream (StreamingOutputCall: one request, many small messages back).
//
// Three modes:
//
//	grpcbench -server celeris-native|celeris|grpc|nethttp [-addr 127.0.0.1:0] [-cpuprofile f] [-memprofile f]
//	    serves until SIGTERM/SIGINT; prints "listening ADDR" first. A fourth
//	    server, celeris-cancelctx (celeris with the request context wrapped in
//	    context.WithCancel), runs only when named.
//	grpcbench -load ADDR [-scenario unary|stream] [-duration 3s] [-conns 4] [-streams 64]
//	    runs the loader against ADDR and prints what it completed.
//	grpcbench [-servers celeris-native,celeris,grpc,nethttp] [-scenarios unary,stream] [-rounds 3] ...
//	    the driver (default): for every round, every server in turn (the order
//	    rotates per round), starts it as a child pinned with taskset -c
//	    -server-cpu and GOMAXPROCS=1, pins itself (the loader) to -load-cpu,
//	    warms up, counts completed RPCs/messages and the child's CPU time
//	    (/proc/PID/stat) and read/write system calls (/proc/PID/io) over
//	    -duration, and prints every round and a table of medians with ratios
//	    against grpc-go's own server and the net/http mount.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "grpcbench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("grpcbench", flag.ContinueOnError)
	server := fs.String("server", "", "server mode: celeris-native, celeris, grpc, nethttp or celeris-cancelctx")
	addr := fs.String("addr", "127.0.0.1:0", "server mode: listen address")
	cpuprofile := fs.String("cpuprofile", "", "server mode: write a CPU profile here, stopped at SIGTERM/SIGINT")
	memprofile := fs.String("memprofile", "", "server mode: write a heap profile (alloc_space/alloc_objects since start) here at SIGTERM/SIGINT")
	loadAddr := fs.String("load", "", "load mode: the server's address")
	scenario := fs.String("scenario", "unary", "load mode: unary or stream")

	var lc loadConfig
	fs.IntVar(&lc.Conns, "conns", 4, "loader: client connections (grpc.ClientConn each)")
	fs.IntVar(&lc.Streams, "streams", 64, "loader: concurrent RPCs per connection")
	fs.IntVar(&lc.Size, "size", 16, "loader: request and response payload bytes (unary), bytes per message (stream)")
	fs.IntVar(&lc.StreamMsgs, "stream-msgs", 64, "loader: messages per server-streaming RPC")

	var dc driveConfig
	servers := fs.String("servers", "celeris-native,celeris,grpc,nethttp", "driver: servers to compare (celeris-cancelctx also exists: celeris with the request context wrapped in context.WithCancel)")
	scenarios := fs.String("scenarios", "unary,stream", "driver: scenarios")
	fs.IntVar(&dc.Rounds, "rounds", 3, "driver: interleaved rounds")
	fs.DurationVar(&dc.Warmup, "warmup", time.Second, "driver: load before each measured window")
	duration := fs.Duration("duration", 3*time.Second, "measured window (driver) or load time (load mode)")
	fs.StringVar(&dc.ServerCPU, "server-cpu", "0", "driver: taskset CPU list for the servers")
	fs.StringVar(&dc.LoadCPU, "load-cpu", "1", "driver: taskset CPU list for the loader (this process)")
	fs.BoolVar(&dc.Pin, "pin", true, "driver: pin with taskset (servers on -server-cpu, loader on -load-cpu)")
	fs.IntVar(&dc.ServerProcs, "server-procs", 1, "driver: GOMAXPROCS of the servers")
	fs.StringVar(&dc.ProfileDir, "profile-dir", "", "driver: have every server write a CPU profile into this directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch {
	case *server != "":
		return serve(*server, *addr, *cpuprofile, *memprofile)
	case *loadAddr != "":
		lc.Addr, lc.Scenario = *loadAddr, *scenario
		return loadMode(lc, *duration)
	default:
		dc.Load, dc.Duration = lc, *duration
		dc.Servers, dc.Scenarios = splitList(*servers), splitList(*scenarios)
		res, err := drive(dc, os.Stdout)
		if err != nil {
			return err
		}
		printTable(os.Stdout, dc, res)
		return nil
	}
}
