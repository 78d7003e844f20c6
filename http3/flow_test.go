package celerish3_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	celerish3 "github.com/celeris-dev/celeris/http3"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/quic-go/quic-go/http3"
)

// countingReader yields n bytes and counts what the client has taken.
type countingReader struct {
	n, taken atomic.Int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	left := r.n.Load() - r.taken.Load()
	if left <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), left)
	r.taken.Add(k)
	return int(k), nil
}

// TestUnreadBodyHeldBack: a handler that does not read a large upload holds the
// client back through QUIC flow control; the server never takes the body in
// whole (here 64 MiB, of which the client can send only its stream window).
func TestUnreadBodyHeldBack(t *testing.T) {
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s := celeris.New(celeris.Config{
		Addr: "127.0.0.1:0", TLSAddr: "127.0.0.1:0", Engine: celeris.EngineStd,
		TLSConfig:          &tls.Config{Certificates: []tls.Certificate{cert.TLS}},
		MaxRequestBodySize: 1 << 30,
	})
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	s.POST("/ignore", func(c *celeris.Context) error {
		entered <- struct{}{}
		<-release
		return c.String(200, "ignored")
	})
	h3 := celerish3.Enable(s, celerish3.Config{})
	celeristest.Start(t, s)
	addr, err := h3.WaitReady()
	if err != nil {
		t.Fatal(err)
	}
	tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.Close()
	body := &countingReader{}
	body.n.Store(64 << 20)
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequest("POST", "https://"+addr.String()+"/ignore", body)
		req.ContentLength = 64 << 20
		if resp, err := (&http.Client{Transport: tr}).Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	time.Sleep(500 * time.Millisecond) // the client sends what the windows allow
	taken := body.taken.Load()
	close(release)
	<-done
	// The stream's receive window (quic-go's 512 KiB to start, grown only as
	// the server reads, to 6 MiB at most) bounds what the client may send.
	if taken > 8<<20 {
		t.Fatalf("the client sent %d MiB to a handler that reads nothing", taken>>20)
	}
	t.Logf("the client sent %d KiB of 64 MiB before the handler answered", taken>>10)
}

// TestSlowReaderHoldsHandler: a client that does not read a download holds the
// handler's writes back (QUIC flow control); the server never buffers the
// response whole (output bounded like input).
func TestSlowReaderHoldsHandler(t *testing.T) {
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s := celeris.New(celeris.Config{
		Addr: "127.0.0.1:0", TLSAddr: "127.0.0.1:0", Engine: celeris.EngineStd,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}},
	})
	var written atomic.Int64
	const total = 64 << 20
	s.GET("/big", func(c *celeris.Context) error {
		w, err := c.StreamLength(200, "application/octet-stream", total)
		if err != nil {
			return err
		}
		chunk := make([]byte, 64<<10)
		for i := 0; i < total/len(chunk); i++ {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
			written.Add(int64(len(chunk)))
		}
		return nil
	})
	h3 := celerish3.Enable(s, celerish3.Config{})
	celeristest.Start(t, s)
	addr, err := h3.WaitReady()
	if err != nil {
		t.Fatal(err)
	}
	tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.Close()
	resp, err := (&http.Client{Transport: tr}).Get("https://" + addr.String() + "/big")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	time.Sleep(500 * time.Millisecond) // the client reads nothing
	held := written.Load()
	// The client's stream window (512 KiB to start; it grows only as the
	// client reads) and the send buffers of one Write bound what the handler
	// got through.
	if held > 8<<20 {
		t.Fatalf("the handler wrote %d MiB to a client that reads nothing", held>>20)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || n != total {
		t.Fatalf("read %d: %v", n, err)
	}
	t.Logf("the handler had written %d KiB before the client read", held>>10)
}
