package celeris

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/testkit"
)

// stdGoroutines counts the goroutines running std engine code.
func stdGoroutines() (int, string) {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	var sample string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "internal/stdengine.") {
			n++
			if sample == "" {
				sample = g
			}
		}
	}
	return n, sample
}

// Every owner and writer goroutine of the std engine ends: connections that
// finish, that the client drops mid-request, mid-body or mid-handshake, that
// half-close, that speak h2 over TLS; idle ones at shutdown.
func TestStdEngineNoGoroutineLeak(t *testing.T) {
	s := New(Config{Addr: "127.0.0.1:0", Engine: EngineStd, TLSAddr: "127.0.0.1:0",
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{testCert().TLS}}, EventLoops: 1})
	tlsRoutes(s)
	errc := runServer(t, s)
	plain, secure := s.Addr().String(), s.TLSAddr().String()
	// leave closes c once the server read what c sent (a partial request or
	// handshake).
	leave := func(c net.Conn) {
		time.Sleep(20 * time.Millisecond) // a sleep: the server reads what came before the client leaves; nothing tells the client it did
		c.Close()
	}

	for _, raw := range []string{
		"GET /bench HTTP/1.1\r\nHost: x\r\n\r\n",                            // answered, left open (idle)
		"GET /bench HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",       // closed by the server
		"GET /bench HTTP/1.1\r\nHo",                                         // dropped mid-head
		"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab", // dropped mid-body
		"GET /held HTTP/1.1\r\nHost: x\r\n\r\n",                             // dropped while served
	} {
		if strings.Contains(raw, "/held") {
			testkit.Wait(t, "the earlier requests to end", func() bool { return s.Stats().ActiveRequests == 0 })
		}
		c, err := net.Dial("tcp", plain)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, raw)
		if strings.Contains(raw, "close") {
			io.ReadAll(c)
		}
		if strings.Contains(raw, "/held") {
			testkit.Wait(t, "the held request in its handler", func() bool { return s.Stats().ActiveRequests == 1 })
			c.Close()
		} else if !strings.HasSuffix(raw, "\r\n\r\n") {
			leave(c)
		}
		defer c.Close()
	}
	hc, err := net.Dial("tcp", plain) // half-close with an answer owed
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(hc, "GET /held HTTP/1.1\r\nHost: x\r\n\r\n")
	hc.(*net.TCPConn).CloseWrite()
	go io.Copy(io.Discard, hc)
	defer hc.Close()

	for _, hello := range []string{"", "\x16\x03\x01\x02\x00\x01"} { // dropped mid-handshake
		c, err := net.Dial("tcp", secure)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, hello)
		leave(c)
	}
	client := tlsClient(t, true)
	for range 5 {
		if _, body := getBody(t, client, "https://"+secure+"/tls"); !strings.HasPrefix(body, "tls https HTTP/2.0") {
			t.Fatal(body)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+secure+"/held", nil)
	client.Do(req) // a stream reset by the client
	cancel()

	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	if err := s.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	<-errc
	var n int
	var sample string
	if !testkit.Until(5*time.Second, func() bool { n, sample = stdGoroutines(); return n == 0 }) {
		t.Fatalf("%d std engine goroutines left after Shutdown, e.g.:\n%s", n, sample)
	}
}
