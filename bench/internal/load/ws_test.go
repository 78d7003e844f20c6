package load

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/celeris-dev/celeris/bench/internal/catalog"
)

// wsServer is a gorilla/websocket echo server; ?drop=N echoes N messages,
// then closes.
func wsServer(t *testing.T) string {
	t.Helper()
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for n := 0; ; n++ {
			if r.URL.Query().Get("drop") != "" && n == 3 {
				return
			}
			mt, m, err := c.ReadMessage()
			if err != nil {
				return
			}
			if c.WriteMessage(mt, m) != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func TestRunWS(t *testing.T) {
	addr := wsServer(t)
	for _, size := range []int{64, 16 << 10, 200 << 10} {
		res, err := Run(context.Background(), Options{
			Target:   Target{Proto: catalog.WS, Addr: addr, Path: "/ws/echo", Message: bytes.Repeat([]byte("w"), size)},
			Mode:     ModeRampup, // ignored: ws is always fixed
			Conns:    50,
			Duration: 300 * time.Millisecond,
			Warmup:   50 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total.OK < 50 || res.Total.Errors != 0 || res.Clients != 50 || res.P50 <= 0 {
			t.Errorf("%d bytes: %+v", size, res)
		}
	}
	// Connections that the server closes are counted, not dialled again.
	res, err := Run(context.Background(), Options{
		Target: Target{Proto: catalog.WS, Addr: addr, Path: "/ws/echo?drop=1", Message: []byte("x")},
		Mode:   ModeFixed, Conns: 4, Duration: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total.Errors != 4 || len(res.Warnings) == 0 {
		t.Errorf("dropping server: errors %d, warnings %v", res.Total.Errors, res.Warnings)
	}
}

func TestWSIdle(t *testing.T) {
	addr := wsServer(t)
	rec := NewRecorder(1)
	p := NewWSPool(Target{Addr: addr, Path: "/ws/echo", Message: []byte("hello")}, rec, 2, true)
	p.Grow(100)
	if !p.WaitAnswered(5*time.Second) || p.Answered() != 100 || p.Failed() != 0 {
		t.Errorf("answered %d, failed %d (%v)", p.Answered(), p.Failed(), p.FirstError())
	}
	time.Sleep(50 * time.Millisecond)
	if c := rec.Drain(NewHistogram()); c.OK != 100 {
		t.Errorf("idle connections made %d round trips, want 100", c.OK)
	}
	if !p.Stop() {
		t.Error("stop timed out")
	}
}
