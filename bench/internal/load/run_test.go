package load

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/catalog"
)

// server starts an HTTP/1.1 + h2c net/http server on the loopback.
func server(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bench", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "OK") })
	mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		io.WriteString(w, strconv.FormatInt(n, 10))
	})
	srv := &http.Server{Handler: mux, Protocols: &p}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func TestRunFixed(t *testing.T) {
	addr := server(t)
	for _, tt := range []struct {
		proto, method, path string
		body                []byte
		pipeline            int
		wantClients         int
	}{
		{proto: catalog.H1, method: "GET", path: "/bench", pipeline: 4, wantClients: 3},
		{proto: catalog.H1, method: "POST", path: "/upload", body: make([]byte, 4096), pipeline: 1, wantClients: 3},
		{proto: catalog.H2C, method: "GET", path: "/bench", wantClients: 6},
		{proto: catalog.H2C, method: "POST", path: "/upload", body: make([]byte, 100000), wantClients: 6},
		{proto: catalog.H1, method: "GET", path: "/missing", pipeline: 1, wantClients: 3},
	} {
		t.Run(tt.proto+tt.path, func(t *testing.T) {
			var windows []bool
			res, err := Run(context.Background(), Options{
				Target: Target{Proto: tt.proto, Addr: addr, Method: tt.method, Path: tt.path, Body: tt.body,
					Pipeline: tt.pipeline, Streams: 2},
				Mode:     ModeFixed,
				Conns:    3,
				Duration: 300 * time.Millisecond,
				Warmup:   50 * time.Millisecond,
				OnWindow: func(start bool) { windows = append(windows, start) },
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(windows) != 2 || !windows[0] || windows[1] {
				t.Errorf("OnWindow calls = %v, want [true false]", windows)
			}
			if res.Clients != tt.wantClients || res.Total.Errors != 0 || res.Elapsed < 300*time.Millisecond {
				t.Errorf("result %+v", res)
			}
			if tt.path == "/missing" {
				if res.RPS != 0 || res.Total.Non2xx == 0 {
					t.Errorf("404s: RPS %v, non-2xx %d; want 0 and > 0", res.RPS, res.Total.Non2xx)
				}
				return
			}
			if res.RPS <= 0 || res.Total.Non2xx != 0 || res.P95 <= 0 || len(res.Series) != 1 {
				t.Errorf("result %+v", res)
			}
		})
	}
}

func TestRunRampup(t *testing.T) {
	addr := server(t)
	res, err := Run(context.Background(), Options{
		Target: Target{Proto: catalog.H1, Addr: addr, Method: "GET", Path: "/bench"},
		Mode:   ModeRampup,
		Rampup: RampupConfig{Start: 2, Step: 2, Interval: 50 * time.Millisecond,
			P95Limit: time.Second, MaxDuration: 400 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Series) < 6 || res.Series[1].Clients != 4 || res.RPS <= 0 || res.Clients < 2 || res.Total.Errors != 0 {
		t.Fatalf("result %+v", res)
	}
	if res.StopReason == "" {
		t.Fatal("no stop reason")
	}
}

func TestRunErrorsWhenServerIsGone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, proto := range catalog.Protocols {
		d := 100 * time.Millisecond
		if proto == catalog.H3 {
			// Nothing answers on UDP: a QUIC handshake fails only after
			// its idle timeout (dialTimeout).
			d = dialTimeout + 500*time.Millisecond
		}
		res, err := Run(context.Background(), Options{
			Target: Target{Proto: proto, Addr: addr, Method: "GET", Path: "/bench"},
			Mode:   ModeFixed, Conns: 2, Duration: d,
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total.Errors == 0 || res.RPS != 0 {
			t.Errorf("%s: errors %d, RPS %v; want errors and no RPS", proto, res.Total.Errors, res.RPS)
		}
	}
}

func TestRunCancelled(t *testing.T) {
	addr := server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Run(ctx, Options{
		Target: Target{Proto: catalog.H2C, Addr: addr, Method: "GET", Path: "/bench"},
		Mode:   ModeFixed, Conns: 2, Duration: time.Minute,
	})
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("err = %v after %v; want a prompt context error", err, time.Since(start))
	}
}
