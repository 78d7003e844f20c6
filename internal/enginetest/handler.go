package enginetest

import (
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/work"
	"github.com/celeris-dev/celeris/internal/ws"
)

// handler serves the suite's routes (httpmsg.Handler):
//
//	/inline/...   inline on the loop: 200, the path as body
//	/echo/...     on a worker: 200, the path as body
//	/slow         on a worker, 200 ms, then "slow"
//	/gate         on a worker: waits until the case releases the gate, then "released"
//	/big?n=N      on a worker: a complete body of N bytes (counted in served)
//	/stream?n=N   on a worker: N bytes streamed in 16 KiB writes (counted in streamed)
//	/upload       on a worker: waits for the gate, then reads the body and answers its length
//	/hijack       on a worker: hijacks, writes "hijacked\n", echoes one line, closes
//	/ws           on a worker: switches to WebSocket (internal/ws) echoing messages
type handler struct {
	pool *work.Pool

	gateOnce sync.Once
	gate     chan struct{} // closed to release /gate and /upload
	entered  atomic.Int64  // handlers that reached the gate

	served   atomic.Int64 // /big answers written
	streamed atomic.Int64 // /stream bytes written
}

func newHandler() *handler { return &handler{gate: make(chan struct{})} }

// release opens the gate (idempotent).
func (h *handler) release() { h.gateOnce.Do(func() { close(h.gate) }) }

func (h *handler) Prepare(req *httpmsg.Request) bool {
	return strings.HasPrefix(req.Path, "/inline/")
}

func (h *handler) Serve(req *httpmsg.Request, w httpmsg.ResponseWriter) {
	text := []httpmsg.Field{{Name: "Content-Type", Value: "text/plain"}}
	switch p := req.Path; {
	case strings.HasPrefix(p, "/inline/"), strings.HasPrefix(p, "/echo/"):
		_ = w.WriteResponse(200, text, []byte(p))
	case p == "/slow":
		time.Sleep(200 * time.Millisecond) // a sleep: the route is a slow handler
		_ = w.WriteResponse(200, text, []byte("slow"))
	case p == "/gate":
		h.entered.Add(1)
		<-h.gate
		_ = w.WriteResponse(200, text, []byte("released"))
	case p == "/big":
		body := make([]byte, queryInt(req.RawQuery))
		_ = w.WriteResponse(200, text, body)
		h.served.Add(1)
	case p == "/stream":
		n := queryInt(req.RawQuery)
		if w.WriteHeader(200, text) != nil {
			return
		}
		chunk := make([]byte, 16<<10)
		for n > 0 {
			k := min(n, len(chunk))
			if _, err := w.Write(chunk[:k]); err != nil {
				return
			}
			h.streamed.Add(int64(k))
			n -= k
		}
		_ = w.End(nil)
	case p == "/upload":
		h.entered.Add(1)
		<-h.gate
		var n int64
		if req.BodyReader != nil {
			n, _ = io.Copy(io.Discard, req.BodyReader)
		} else {
			n = int64(len(req.Body))
		}
		_ = w.WriteResponse(200, text, []byte(strconv.FormatInt(n, 10)))
	case p == "/hijack":
		hj, ok := w.(httpmsg.Hijacker)
		if !ok {
			_ = w.WriteResponse(500, text, []byte("no hijacker"))
			return
		}
		nc, buffered, pending, err := hj.Hijack()
		if err != nil {
			return
		}
		go serveHijacked(nc, buffered, pending)
	case p == "/ws":
		key, _ := req.HeaderValue("Sec-WebSocket-Key")
		sw, ok := w.(httpmsg.Switcher)
		if !ok {
			_ = w.WriteResponse(500, text, []byte("no switcher"))
			return
		}
		header := []httpmsg.Field{
			{Name: "Upgrade", Value: "websocket"},
			{Name: "Connection", Value: "Upgrade"},
			{Name: "Sec-WebSocket-Accept", Value: ws.AcceptKey(key)},
		}
		err := sw.Switch(header, func(t httpmsg.Conn) httpmsg.Proto {
			c := ws.NewConn(t, ws.Config{Pool: h.pool}, ws.App{OnMessage: func(c *ws.Conn, op ws.Opcode, payload []byte) error {
				return c.WriteMessage(op, payload)
			}})
			c.Start()
			return c
		})
		if err != nil {
			_ = w.WriteResponse(400, text, []byte(err.Error()))
		}
	default:
		_ = w.WriteResponse(404, text, []byte("not found"))
	}
}

// serveHijacked writes what the engine still owed, then "hijacked\n", then
// echoes one line and closes.
func serveHijacked(nc net.Conn, buffered, pending []byte) {
	defer nc.Close()
	if _, err := nc.Write(append(pending, "hijacked\n"...)); err != nil {
		return
	}
	line := append([]byte(nil), buffered...)
	buf := make([]byte, 256)
	for !strings.Contains(string(line), "\n") {
		n, err := nc.Read(buf)
		if err != nil {
			return
		}
		line = append(line, buf[:n]...)
	}
	_, _ = nc.Write(line[:strings.IndexByte(string(line), '\n')+1])
}

// queryInt reads n=N from a raw query.
func queryInt(q string) int {
	v, ok := strings.CutPrefix(q, "n=")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(v)
	return n
}
