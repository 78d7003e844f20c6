//go:build linux

package celerish3_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	celerish3 "github.com/celeris-dev/celeris/http3"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/quic-go/quic-go/http3"
)

// TestUpgradeHelper is a server process for TestUpgradeHTTP3 (when
// CELERIS_H3_HELPER is set): TLS and HTTP/3 on 127.0.0.1, upgraded on SIGHUP.
func TestUpgradeHelper(t *testing.T) {
	if os.Getenv("CELERIS_H3_HELPER") == "" {
		t.Skip("the server process of TestUpgradeHTTP3")
	}
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s := celeris.New(celeris.Config{
		Addr: "127.0.0.1:0", TLSAddr: "127.0.0.1:0", Engine: celeris.EngineStd,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}},
	})
	pid := strconv.Itoa(os.Getpid())
	s.GET("/slow", func(c *celeris.Context) error {
		ms, _ := strconv.Atoi(c.Query("ms"))
		time.Sleep(time.Duration(ms) * time.Millisecond)
		return c.String(200, pid)
	})
	h3 := celerish3.Enable(s, celerish3.Config{})
	go func() {
		<-s.Ready()
		a, _ := h3.WaitReady()
		celeristest.PrintReady("udp", a.String())
	}()
	err = s.StartGraceful(20 * time.Second)
	fmt.Fprintf(os.Stderr, "helper %s: StartGraceful returned %v\n", pid, err)
	os.Exit(0)
}

// TestUpgradeHTTP3: HTTP/3 clients (quic-go's, each on its own QUIC
// connection) send requests, 100 ms each on the server, while the server
// process upgrades itself three times, passing its UDP socket on. Every
// request completes or fails with an error the client may retry (the
// connection closed with H3_NO_ERROR, or refused by GOAWAY): none hangs past
// the client's timeout, and every old process exits after its drain.
func TestUpgradeHTTP3(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	p := celeristest.StartTestProcess(t, "TestUpgradeHelper", "CELERIS_H3_HELPER=1")
	cur := p.Next(30 * time.Second)

	const clients, timeout = 6, 15 * time.Second
	var ok, retryable, hung atomic.Int64
	var otherMu sync.Mutex
	var other []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	url := "https://" + cur.Values["udp"] + "/slow?ms=100"
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
			defer tr.Close()
			c := &http.Client{Transport: tr, Timeout: timeout}
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := c.Get(url)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				switch {
				case err == nil && resp.StatusCode == 200:
					ok.Add(1)
				case err != nil && errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
					hung.Add(1)
				case err != nil && retryableH3(err):
					retryable.Add(1)
					tr.CloseIdleConnections()
				default:
					otherMu.Lock()
					other = append(other, fmt.Sprint(resp != nil, err))
					otherMu.Unlock()
				}
			}
		}()
	}
	udp := cur.Values["udp"]
	for i := range 3 {
		time.Sleep(400 * time.Millisecond)
		if err := syscall.Kill(cur.Pid, syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		n := p.Next(30 * time.Second)
		if n.Values["udp"] != udp {
			t.Fatalf("upgrade %d: the new process serves HTTP/3 on %s, want %s", i+1, n.Values["udp"], udp)
		}
		celeristest.WaitGone(t, cur.Pid, 30*time.Second)
		cur = n
	}
	time.Sleep(400 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("HTTP/3 across 3 upgrades, %d clients: %d requests answered, %d failed with a retryable error, %d hung, %d other errors",
		clients, ok.Load(), retryable.Load(), hung.Load(), len(other))
	if hung.Load() != 0 || len(other) != 0 {
		t.Fatalf("%d requests hung; other errors: %q", hung.Load(), other)
	}
	if ok.Load() == 0 {
		t.Fatal("no request was answered")
	}
	_ = syscall.Kill(cur.Pid, syscall.SIGTERM)
}

// isTimeout reports whether err is the client's timeout.
func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// retryableH3 reports whether err says the request was not processed or the
// connection closed without an error (RFC 9114 §8.1: H3_NO_ERROR,
// H3_REQUEST_REJECTED; a GOAWAY), so that a client may send it again.
func retryableH3(err error) bool {
	var ae *http3.Error
	if errors.As(err, &ae) {
		return ae.ErrorCode == http3.ErrCodeNoError || ae.ErrorCode == http3.ErrCodeRequestRejected
	}
	s := err.Error()
	return strings.Contains(s, "H3_NO_ERROR") || strings.Contains(s, "H3_REQUEST_REJECTED") ||
		strings.Contains(s, "GOAWAY") || strings.Contains(s, "server stopped")
}
