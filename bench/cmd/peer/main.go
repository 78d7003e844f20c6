// Command peer serves the benchmark routes with one of the peer frameworks,
// so the suite can measure each in its own process:
//
//	peer -framework gin -addr 127.0.0.1:9000 [-tls] [-cpuprofile FILE] [-memprofile FILE]
//
// The WebSocket peers (gorilla, coder, gobwas, fasthttp-ws, celeris-blocking)
// serve GET /ws/echo, an echo of every message; see ws.go.
//
// Routes (identical answers in every framework):
//
//	GET  /bench                    200 text/plain "OK"
//	GET  /json                     200 application/json {"message":"Hello, World!"} (encoded per request)
//	GET  /users/:id/posts/:postId  200 text/plain "user=<id> post=<postId>"
//	POST /upload                   reads the whole body; 200 text/plain with its length
//	GET  /download?size=N          200 with N bytes
//
// nethttp, gin, echo and chi run on one net/http server that speaks HTTP/1.1
// and prior-knowledge h2c; fasthttp and fiber speak HTTP/1.1 only. SIGTERM or
// With -tls they serve HTTPS instead, with a self-signed certificate made at
// start (tls.go): nethttp, gin, echo and chi HTTP/1.1 and h2 by ALPN,
// fasthttp and fiber HTTP/1.1 only. SIGTERM or
// SIGINT stops the server gracefully and writes the profiles asked for.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"
)

// server is one framework's server bound to a listener.
type server interface {
	serve(ln net.Listener) error
	shutdown(ctx context.Context) error
}

var frameworks = map[string]func() server{
	"nethttp":  func() server { return newStdServer(nethttpHandler()) },
	"gin":      func() server { return newStdServer(ginHandler()) },
	"echo":     func() server { return newStdServer(echoHandler()) },
	"chi":      func() server { return newStdServer(chiHandler()) },
	"fasthttp": newFasthttpServer,
	"fiber":    newFiberServer,
	// WebSocket echo peers (ws.go).
	"gorilla":          func() server { return newStdServer(gorillaHandler()) },
	"coder":            func() server { return newStdServer(coderHandler()) },
	"gobwas":           newGobwasServer,
	"fasthttp-ws":      newFastwsServer,
	"celeris-blocking": newCelerisBlocking,
	// HTTP/3 (quic.go): quic-go's http3.Server with the nethttp routes.
	"quicgo": newQuicServer,
}

// addrServer is a server that binds its address itself (Celeris: gnet
// listens); run calls listenAndServe instead of serve.
type addrServer interface {
	server
	listenAndServe(addr string) error
}

func main() {
	name := flag.String("framework", "nethttp", "framework: nethttp, gin, echo, chi, fasthttp, fiber; HTTP/3: quicgo; WebSocket: gorilla, coder, gobwas, fasthttp-ws, celeris-blocking")
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file on SIGTERM/SIGINT")
	memProfile := flag.String("memprofile", "", "write a heap profile to this file on SIGTERM/SIGINT")
	useTLS := flag.Bool("tls", false, "serve HTTPS (self-signed certificate; h2 and http/1.1 by ALPN where the framework speaks h2)")
	flag.Parse()
	mk, ok := frameworks[*name]
	if !ok {
		fmt.Fprintf(os.Stderr, "peer: unknown framework %q\n", *name)
		os.Exit(2)
	}
	if err := run(mk(), *name, *addr, *useTLS, *cpuProfile, *memProfile); err != nil {
		fmt.Fprintf(os.Stderr, "peer %s: %v\n", *name, err)
		os.Exit(1)
	}
}

func run(srv server, name, addr string, useTLS bool, cpuProfile, memProfile string) error {
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	errc := make(chan error, 1)
	var cert tls.Certificate
	if useTLS {
		if _, ok := srv.(addrServer); ok {
			return fmt.Errorf("-tls: %s binds its own address; not supported", name)
		}
		var err error
		if cert, err = selfSigned(); err != nil {
			return fmt.Errorf("self-signed certificate: %w", err)
		}
	}
	if as, ok := srv.(addrServer); ok {
		go func() { errc <- as.listenAndServe(addr) }()
		fmt.Fprintf(os.Stderr, "peer %s serving %s (GOMAXPROCS=%d)\n", name, addr, runtime.GOMAXPROCS(0))
	} else {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		if useTLS {
			go func() { errc <- serveTLS(srv, ln, cert) }()
		} else {
			go func() { errc <- srv.serve(ln) }()
		}
		fmt.Fprintf(os.Stderr, "peer %s listening on %s (GOMAXPROCS=%d, TLS %v)\n", name, ln.Addr(), runtime.GOMAXPROCS(0), useTLS)
	}

	select {
	case err := <-errc:
		return err
	case <-sig:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := srv.shutdown(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "peer %s: shutdown: %v\n", name, err)
	}
	if memProfile != "" {
		return writeHeapProfile(memProfile)
	}
	return nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC() // up-to-date statistics
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
