package celerish3_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	celerish3 "github.com/celeris-dev/celeris/http3"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/quic-go/quic-go/http3"
)

// TestNoGoroutineLeak: after requests of every kind (answered, cancelled,
// refused) and Shutdown, the goroutines the server started are gone.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s := celeris.New(celeris.Config{
		Addr: "127.0.0.1:0", TLSAddr: "127.0.0.1:0", Engine: celeris.EngineStd,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}},
	})
	routes(s)
	h3 := celerish3.Enable(s, celerish3.Config{})
	errc := make(chan error, 1)
	go func() { errc <- s.Start() }()
	addr, err := h3.WaitReady()
	if err != nil {
		t.Fatal(err)
	}
	tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	client := &http.Client{Transport: tr}
	base := "https://" + addr.String()
	for _, path := range []string{"/hello", "/sse", "/trailers", "/download/1", "/nope"} {
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	resp, err := client.Post(base+"/upload", "text/plain", strings.NewReader(strings.Repeat("x", 100<<10)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/slow", nil)
	if _, err := client.Do(req); err == nil {
		t.Fatal("/slow answered")
	}
	cancel()
	<-slowCancelled
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	if err := s.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		t.Fatal(err)
	}
	_ = tr.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before+2 { // the Date refresher and a finishing runtime goroutine at most
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
