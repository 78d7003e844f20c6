package h2

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// rawClient is a prior-knowledge h2c client over a real socket for the hardening
// tests: it writes whatever frames it is given, legal or not (package frame
// builds them), and a reader goroutine parses what the server sends, decoding
// every header block so the HPACK state stays in step. The socket gives up after
// 20 s; the test's end closes it.
type rawClient struct {
	t      testing.TB
	nc     net.Conn
	enc    *hpack.Encoder
	encBuf bytes.Buffer
	frames chan rawFrame
}

// rawFrame is a frame the server sent; fields holds a HEADERS frame's decoded
// block (CONTINUATION is not expected: the answers are small).
type rawFrame struct {
	frame.Frame
	fields map[string]string
}

func dialRawClient(t testing.TB, addr string) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	rc := &rawClient{t: t, nc: nc, frames: make(chan rawFrame, 1<<14)}
	rc.enc = hpack.NewEncoder(&rc.encBuf)
	t.Cleanup(func() { _ = nc.Close() })
	go rc.read()
	rc.write(append([]byte(clientPreface), frame.AppendSettings(nil)...))
	return rc
}

// read parses the server's frames until the connection ends, then closes
// frames.
func (rc *rawClient) read() {
	defer close(rc.frames)
	dec := hpack.NewDecoder(4096, nil)
	var buf []byte
	tmp := make([]byte, 64<<10)
	for {
		n, err := rc.nc.Read(tmp)
		buf = append(buf, tmp[:n]...)
		for {
			f, k, perr := frame.Parse(buf, frame.MaxMaxFrameSize)
			if perr != nil {
				break
			}
			// Copy: buf is reused.
			f2, _, _ := frame.Parse(frame.AppendRaw(nil, f.Type, f.Flags, f.StreamID, bytes.Clone(f.Payload)), frame.MaxMaxFrameSize)
			buf = buf[k:]
			rf := rawFrame{Frame: f2}
			if f2.Type == frame.TypeHeaders {
				hf, derr := dec.DecodeFull(f2.Data)
				if derr != nil {
					return
				}
				rf.fields = map[string]string{}
				for _, h := range hf {
					rf.fields[h.Name] = h.Value
				}
			}
			rc.frames <- rf
		}
		if err != nil {
			return
		}
	}
}

// write sends b; a server that already closed the connection is no error here
// (its GOAWAY is what the test waits for).
func (rc *rawClient) write(b []byte) { _, _ = rc.nc.Write(b) }

// encode encodes a header block with the client's HPACK encoder.
func (rc *rawClient) encode(fields ...string) []byte {
	rc.encBuf.Reset()
	for i := 0; i+1 < len(fields); i += 2 {
		_ = rc.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return bytes.Clone(rc.encBuf.Bytes())
}

// next returns the next frame the server sent, or false when the connection
// ended or nothing came within timeout.
func (rc *rawClient) next(timeout time.Duration) (rawFrame, bool) {
	select {
	case f, ok := <-rc.frames:
		return f, ok
	case <-time.After(timeout):
		return rawFrame{}, false
	}
}

// untilGoAway reads frames until GOAWAY, which it returns with the streams reset
// before it.
func (rc *rawClient) untilGoAway() (rawFrame, map[uint32]bool) {
	rc.t.Helper()
	resets := map[uint32]bool{}
	for {
		f, ok := rc.next(5 * time.Second)
		if !ok {
			rc.t.Fatalf("no GOAWAY; %d streams reset", len(resets))
		}
		switch f.Type {
		case frame.TypeRSTStream:
			resets[f.StreamID] = true
		case frame.TypeGoAway:
			return f, resets
		}
	}
}

// expectMalformed reads frames until stream id's answer: a 400 head, then
// RST_STREAM PROTOCOL_ERROR (RFC 9113 §8.1.1).
func (rc *rawClient) expectMalformed(id uint32) {
	rc.t.Helper()
	status := ""
	for {
		f, ok := rc.next(5 * time.Second)
		if !ok {
			rc.t.Fatalf("stream %d: no answer (status %q)", id, status)
		}
		if f.StreamID != id {
			continue
		}
		switch f.Type {
		case frame.TypeHeaders:
			status = f.fields[":status"]
			if f.EndStream() {
				rc.t.Fatalf("stream %d: %s with END_STREAM", id, status)
			}
		case frame.TypeRSTStream:
			if status != "400" || f.ErrCode != frame.ErrCodeProtocol {
				rc.t.Fatalf("stream %d: status %q, then RST_STREAM %v", id, status, f.ErrCode)
			}
			return
		case frame.TypeData:
			rc.t.Fatalf("stream %d: DATA %q", id, f.Data)
		}
	}
}

// stuckHandler answers /fast at once; every other request counts itself in
// running (and its high mark in peak) and blocks until release is closed,
// ignoring its stream's end, as a handler stuck in a slow call does: what
// MadeYouReset makes a server pile up.
func stuckHandler(release chan struct{}, running, peak *atomic.Int32) handlerFunc {
	stuck := blockingHandler(release, running, peak)
	return handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		if r.Path == "/fast" {
			_ = w.WriteResponse(200, nil, []byte("fast"))
			return
		}
		stuck.serve(r, w)
	}}
}

// TestMadeYouResetSocket: CVE-2025-8671 over a real socket, once per way a
// client can make the server reset a stream it just opened. The attacker gets
// GOAWAY ENHANCE_YOUR_CALM after the reset budget (and not before it), the
// handlers running at once never exceed MAX_CONCURRENT_STREAMS although none
// returns, and a second connection is served meanwhile.
func TestMadeYouResetSocket(t *testing.T) {
	const mcs = 8
	for _, tt := range madeYouReset {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			var running, peak atomic.Int32
			srv := startNetServer(t, stuckHandler(release, &running, &peak),
				&Config{MaxConcurrentStreams: mcs, InitialWindowSize: mkrWindow})
			rc := dialRawClient(t, srv.addr())
			var b []byte
			for i := range 3 * maxResets {
				b = append(b, tt.trigger(rc.encode, uint32(2*i+1))...)
			}
			rc.write(b)
			ga, resets := rc.untilGoAway()
			if ga.ErrCode != frame.ErrCodeEnhanceYourCalm {
				t.Fatalf("GOAWAY %v (%s)", ga.ErrCode, ga.Data)
			}
			if len(resets) < maxResets {
				t.Fatalf("GOAWAY after %d resets, budget %d", len(resets), maxResets)
			}
			// The handlers the attack started are still stuck; another connection
			// is served.
			cl := xnetClient()
			cl.Timeout = 5 * time.Second
			resp, body := mustGet(t, cl, "http://"+srv.addr()+"/fast")
			if resp.StatusCode != 200 || string(body) != "fast" {
				t.Fatalf("second connection: %d %q", resp.StatusCode, body)
			}
			if p := peak.Load(); p > mcs {
				t.Fatalf("%d handlers ran at once, MAX_CONCURRENT_STREAMS %d", p, mcs)
			}
			t.Logf("%d streams reset before GOAWAY; at most %d handlers ran at once (%d stuck now)", len(resets), peak.Load(), running.Load())
		})
	}
}

// TestMadeYouResetMemory: CVE-2025-8671. Five attack connections one after
// another each send 9000 streams reset through WINDOW_UPDATE increment 0, their
// handlers stuck: each gets GOAWAY once its budget is spent, so what the server
// keeps (streams, queued requests) stays bounded and the heap flat.
func TestMadeYouResetMemory(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var running, peak atomic.Int32
	srv := startNetServer(t, stuckHandler(release, &running, &peak), &Config{MaxConcurrentStreams: 8})
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before, rssBefore := heap(), rssKiB()
	var goaways int
	const streams = 9000
	for range 5 {
		rc := dialRawClient(t, srv.addr())
		var b []byte
		for i := range streams {
			b = append(b, madeYouReset[0].trigger(rc.encode, uint32(2*i+1))...)
		}
		rc.write(b)
		// Until GOAWAY, or the reset of the last stream.
		for {
			f, ok := rc.next(5 * time.Second)
			if !ok {
				t.Fatal("the server neither reset every stream nor sent GOAWAY")
			}
			if f.Type == frame.TypeGoAway {
				goaways++
				break
			}
			if f.Type == frame.TypeRSTStream && f.StreamID == 2*streams-1 {
				break
			}
		}
	}
	after := heap()
	t.Logf("heap %d KiB before 5 attack connections of %d reset streams each, %d KiB after (RSS %d KiB, %d KiB); %d handlers stuck (at most %d at once over all connections)",
		before>>10, streams, after>>10, rssBefore, rssKiB(), running.Load(), peak.Load())
	if goaways != 5 {
		t.Fatalf("%d of 5 attack connections got GOAWAY", goaways)
	}
	if after > before+4<<20 {
		t.Fatalf("heap grew from %d KiB to %d KiB", before>>10, after>>10)
	}
}

// rssKiB returns the process's resident set size (Linux), or 0.
func rssKiB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// TestAuthoritySocket: RFC 9113 §8.3.1 over a real socket. A request whose
// :authority or Host is not uri-host [ ":" port ] gets a 400 head and
// RST_STREAM PROTOCOL_ERROR, and the connection serves on.
func TestAuthoritySocket(t *testing.T) {
	srv := startNetServer(t, helloHandler(false), nil)
	rc := dialRawClient(t, srv.addr())
	id := uint32(1)
	for _, f := range [][2]string{
		{":authority", "user:pw@example.com"}, {":authority", "example.com:80x"}, {":authority", "exa mple.com"},
		{":authority", ""}, {":authority", "ex\x01.com"}, {"host", "a b"}, {"host", "u@h"},
	} {
		head := []string{":method", "GET", ":scheme", "http", ":path", "/"}
		rc.write(frame.AppendHeaders(nil, id, true, true, rc.encode(append(head, f[0], f[1])...)))
		rc.expectMalformed(id)
		id += 2
	}
	rc.write(frame.AppendHeaders(nil, id, true, true, rc.encode(":method", "GET", ":scheme", "http", ":path", "/ok", ":authority", "[::1]:8080")))
	for {
		f, ok := rc.next(5 * time.Second)
		if !ok {
			t.Fatal("no answer to a valid request")
		}
		if f.Type == frame.TypeHeaders && f.StreamID == id {
			if f.fields[":status"] != "200" {
				t.Fatalf("%v", f.fields)
			}
			break
		}
	}
}

// TestContentLengthSocket: RFC 9113 §8.1.1 over a real socket, on an inline and
// a worker route. A body longer or shorter than its content-length gets a 400
// head and RST_STREAM PROTOCOL_ERROR; the worker's body reader fails with
// ErrContentLength and the inline handler never runs; the connection serves on.
func TestContentLengthSocket(t *testing.T) {
	readErr := make(chan error, 16)
	var inlineRuns atomic.Int32
	h := handlerFunc{
		inline: func(r *httpmsg.Request) bool { return r.Path == "/inline" },
		serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
			if r.BodyReader == nil {
				inlineRuns.Add(1)
				_ = w.WriteResponse(200, nil, r.Body)
				return
			}
			b, err := io.ReadAll(r.BodyReader)
			if err != nil {
				readErr <- err
			}
			_ = w.WriteResponse(200, nil, b)
		},
	}
	srv := startNetServer(t, h, nil)
	rc := dialRawClient(t, srv.addr())
	id := uint32(1)
	for _, path := range []string{"/inline", "/worker"} {
		for _, tt := range []struct {
			length string
			data   []string
		}{
			{length: "3", data: []string{"abcd"}},
			{length: "3", data: []string{"ab", "cd"}},
			{length: "3", data: []string{"ab"}},
			{length: "3", data: []string{"a", "b"}},
		} {
			b := frame.AppendHeaders(nil, id, false, true, rc.encode(":method", "POST", ":scheme", "http", ":path", path,
				":authority", "example.com", "content-length", tt.length))
			for i, d := range tt.data {
				b = frame.AppendData(b, id, i == len(tt.data)-1, []byte(d))
			}
			rc.write(b)
			rc.expectMalformed(id)
			if path == "/worker" {
				select {
				case err := <-readErr:
					if !errors.Is(err, ErrContentLength) {
						t.Fatalf("%s %+v: reader error %v", path, tt, err)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("%s %+v: the reader did not fail", path, tt)
				}
			}
			id += 2
		}
	}
	if n := inlineRuns.Load(); n != 0 {
		t.Fatalf("the inline handler ran %d times", n)
	}
	// A matching body is served, over the same connection and over Go's client.
	rc.write(frame.AppendData(frame.AppendHeaders(nil, id, false, true, rc.encode(":method", "POST", ":scheme", "http",
		":path", "/worker", ":authority", "example.com", "content-length", "2")), id, true, []byte("ok")))
	for {
		f, ok := rc.next(5 * time.Second)
		if !ok {
			t.Fatal("no answer to a valid request")
		}
		if f.StreamID == id && f.Type == frame.TypeData {
			if string(f.Data) != "ok" {
				t.Fatalf("%q", f.Data)
			}
			break
		}
	}
	resp, err := xnetClient().Post("http://"+srv.addr()+"/inline", "text/plain", bytes.NewReader([]byte("hello")))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != "hello" {
		t.Fatalf("%d %q", resp.StatusCode, b)
	}
}
