// Command pacedread measures how well a server keeps a steady reader fed: it asks
// for one large HTTP/1.1 response and reads it at a fixed rate through a small
// receive buffer, like a client on a fast network link, and reports the rate it got.
// A server that lets its socket idle (waiting to learn that its output drained)
// delivers less than the reader's rate.
//
//	pacedread -addr 127.0.0.1:8080 -path '/stream?n=65536' -rate 300e6 -runs 6
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "server address")
	path := flag.String("path", "/stream?n=65536", "request target of a large response")
	rate := flag.Float64("rate", 300e6, "reading rate, bytes per second")
	rcvbuf := flag.Int("rcvbuf", 256<<10, "socket receive buffer, bytes")
	runs := flag.Int("runs", 6, "requests, one connection each")
	flag.Parse()
	var got []float64
	for i := 0; i < *runs; i++ {
		mbs, err := once(*addr, *path, *rate, *rcvbuf)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pacedread:", err)
			os.Exit(1)
		}
		got = append(got, mbs)
		fmt.Printf("%.0f ", mbs)
	}
	sort.Float64s(got)
	fmt.Printf("MB/s; median %.0f MB/s of %.0f MB/s read rate\n", got[len(got)/2], *rate/1e6)
}

// once reads one response at rate and returns the rate achieved, MB/s.
func once(addr, path string, rate float64, rcvbuf int) (float64, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if err := c.(*net.TCPConn).SetReadBuffer(rcvbuf); err != nil {
		return 0, err
	}
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(c, 64<<10), nil)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	start := time.Now()
	buf := make([]byte, 64<<10)
	var total int64
	for {
		n, err := resp.Body.Read(buf)
		total += int64(n)
		if d := time.Duration(float64(total)/rate*1e9) - time.Since(start); d > 0 {
			time.Sleep(d) // never ahead of the rate
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	return float64(total) / time.Since(start).Seconds() / 1e6, nil
}
