package celeris_test

import (
	"bufio"
	"context"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// countingFS counts the files it opened and the ones closed.
type countingFS struct {
	fstest.MapFS
	opened, closed atomic.Int32
}

func (c *countingFS) Open(name string) (fs.File, error) {
	f, err := c.MapFS.Open(name)
	if err != nil {
		return nil, err
	}
	c.opened.Add(1)
	return &countedFile{File: f, fs: c}, nil
}

type countedFile struct {
	fs.File
	fs   *countingFS
	done atomic.Bool
}

func (f *countedFile) Close() error {
	if f.done.CompareAndSwap(false, true) {
		f.fs.closed.Add(1)
	}
	return f.File.Close()
}

// Seek and ReadAt pass through, so that FileFS serves the file as it serves an
// os.File.
func (f *countedFile) Seek(off int64, whence int) (int64, error) {
	return f.File.(io.Seeker).Seek(off, whence)
}

func (f *countedFile) ReadAt(p []byte, off int64) (int, error) {
	return f.File.(io.ReaderAt).ReadAt(p, off)
}

// An inline route's large file recorded for a worker that no worker takes (the
// pool is at MaxWorkers, so the request is refused with 503) is released on the
// loop: the file closes at once (httpmsg.Dropper), not when the garbage
// collector finds it. HTTP/1.1 and h2c on the gnet engine (on the std engine an
// HTTP/1.1 handler runs on its connection's goroutine, which MaxWorkers does not
// bound).
func TestInlineMovedDroppedWhenRefused(t *testing.T) {
	for _, e := range movedEngines[:1] {
		for _, proto := range []string{"h1", "h2c"} {
			t.Run(e.name+"/"+proto, func(t *testing.T) {
				fsys := &countingFS{MapFS: fstest.MapFS{"big.bin": {Data: []byte(strings.Repeat("x", 1<<20))}}}
				release := make(chan struct{})
				var closeOnce atomic.Bool
				unblock := func() {
					if closeOnce.CompareAndSwap(false, true) {
						close(release)
					}
				}
				defer unblock()
				blocked := make(chan struct{}, 1)
				_, addr := celeristest.Serve(t, celeris.Config{Engine: e.engine, EventLoops: 1, MaxWorkers: 1}, func(s *celeris.Server) {
					s.GET("/block", func(c *celeris.Context) error {
						blocked <- struct{}{}
						<-release
						return c.String(http.StatusOK, "done")
					})
					s.GET("/big", func(c *celeris.Context) error {
						return c.FileFS(fsys, "big.bin")
					}).Inline()
				})
				// The one worker blocks.
				go func() {
					nc, err := net.Dial("tcp", addr)
					if err != nil {
						return
					}
					defer nc.Close()
					io.WriteString(nc, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n")
					io.Copy(io.Discard, nc)
				}()
				select {
				case <-blocked:
				case <-time.After(10 * time.Second):
					t.Fatal("the blocking handler never ran")
				}
				status := 0
				if proto == "h1" {
					nc, err := net.Dial("tcp", addr)
					if err != nil {
						t.Fatal(err)
					}
					defer nc.Close()
					_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
					io.WriteString(nc, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
					resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					status = resp.StatusCode
				} else {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/big", nil)
					resp, err := h2cTransport().RoundTrip(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					status = resp.StatusCode
				}
				if status != http.StatusServiceUnavailable {
					t.Fatalf("status %d; want 503 (the only worker is busy)", status)
				}
				testkit.Until(5*time.Second, func() bool { return fsys.closed.Load() == fsys.opened.Load() })
				if o, c := fsys.opened.Load(), fsys.closed.Load(); o == 0 || o != c {
					t.Fatalf("%d files opened, %d closed: the refused inline response kept its file", o, c)
				}
			})
		}
	}
}
