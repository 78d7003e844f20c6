// Command floor is the lower bound of a server's CPU cost per request: it answers
// every request head (anything up to a blank line) with the same ready-made
// response of GET /bench, parsing nothing, routing nothing, allocating nothing.
// It measures what the network engine and the kernel cost on their own, the
// floor of every requests-per-server-CPU-second comparison (docs/BENCHMARKS.md §5):
//
//	floor -engine gnet -addr 127.0.0.1:9000  # gnet v2, as Celeris's engine runs it
//	floor -engine net  -addr 127.0.0.1:9000  # a goroutine per connection, as fasthttp
//	floor -engine net  -addr 127.0.0.1:9000 -tls  # the same over crypto/tls (HTTP/1.1)
//
// With -tls (net only) every connection is crypto/tls with a self-signed ECDSA
// P-256 certificate made at start, ALPN http/1.1: one tls.Conn.Read and one
// tls.Conn.Write per batch of requests, the least any Go server over crypto/tls
// can do for HTTP/1.1 (bench/scripts/tlsfloor.sh runs it as floor-tls).
//
// It is not an HTTP server: it never looks at what it answers.
package main

import (
	"bytes"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/panjf2000/gnet/v2"
)

var response = []byte("HTTP/1.1 200 OK\r\nServer: floor\r\nDate: Sun, 22 Nov 2026 12:00:00 GMT\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\n\r\nOK")

var blank = []byte("\r\n\r\n")

// answer appends one response per complete head in in to out; it returns out and
// the number of bytes of in consumed.
func answer(in, out []byte) ([]byte, int) {
	used := 0
	for {
		i := bytes.Index(in[used:], blank)
		if i < 0 {
			return out, used
		}
		used += i + len(blank)
		out = append(out, response...)
	}
}

type gnetFloor struct {
	gnet.BuiltinEventEngine
	out []byte
}

func (f *gnetFloor) OnTraffic(c gnet.Conn) gnet.Action {
	in, _ := c.Peek(-1)
	var used int
	f.out, used = answer(in, f.out[:0])
	_, _ = c.Discard(used)
	if len(f.out) > 0 {
		_, _ = c.Write(f.out)
	}
	return gnet.None
}

// tlsConfig is the -tls configuration: a self-signed certificate, HTTP/1.1.
func tlsConfig() (*tls.Config, error) {
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert.TLS}, NextProtos: []string{"http/1.1"}}, nil
}

// netFloor serves addr with a goroutine per connection, over TLS when tc is set.
func netFloor(addr string, tc *tls.Config) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if tc != nil {
		ln = tls.NewListener(ln, tc)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			buf := make([]byte, 4096)
			out := make([]byte, 0, 4096)
			have := 0
			for {
				n, err := c.Read(buf[have:])
				if err != nil {
					return
				}
				have += n
				var used int
				out, used = answer(buf[:have], out[:0])
				have = copy(buf, buf[used:have])
				if have == len(buf) {
					return // a head larger than the buffer: not this tool's business
				}
				if len(out) > 0 {
					if _, err := c.Write(out); err != nil {
						return
					}
				}
			}
		}()
	}
}

func main() {
	engine := flag.String("engine", "gnet", "gnet or net")
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	useTLS := flag.Bool("tls", false, "net engine over crypto/tls (self-signed certificate, HTTP/1.1)")
	flag.Parse()
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
		<-sig
		os.Exit(0)
	}()
	var err error
	switch *engine {
	case "gnet":
		if *useTLS {
			err = fmt.Errorf("-tls needs -engine net")
			break
		}
		err = gnet.Run(&gnetFloor{}, "tcp://"+*addr, gnet.WithReusePort(true), gnet.WithTCPNoDelay(gnet.TCPNoDelay), gnet.WithReadBufferCap(64<<10))
	case "net":
		var tc *tls.Config
		if *useTLS {
			if tc, err = tlsConfig(); err != nil {
				break
			}
		}
		err = netFloor(*addr, tc)
	default:
		err = fmt.Errorf("unknown engine %q", *engine)
	}
	fmt.Fprintln(os.Stderr, "floor:", err)
	os.Exit(1)
}
