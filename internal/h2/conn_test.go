package h2

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/testkit"
	"github.com/celeris-dev/celeris/internal/work"
)

func helloHandler(inline bool) handlerFunc {
	return handlerFunc{
		inline: func(*httpmsg.Request) bool { return inline },
		serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
			_ = w.WriteResponse(200, []httpmsg.Field{{Name: "Content-Type", Value: "text/plain"}}, []byte("hello "+r.Path))
		},
	}
}

func TestGetInlineAndWorker(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(map[bool]string{true: "inline", false: "worker"}[inline], func(t *testing.T) {
			hs := newHarness(t, helloHandler(inline), nil)
			hs.handshake()
			for id := uint32(1); id < 10; id += 2 {
				hs.send(frame.AppendHeaders(nil, id, true, true, hs.get("/x")))
				r := hs.response(id)
				if r.status != "200" || string(r.body) != "hello /x" || r.header["content-type"] != "text/plain" ||
					r.header["content-length"] != "8" || r.header["date"] == "" {
					t.Fatalf("%+v", r)
				}
			}
			hs.settle()
			if hs.c.Busy() {
				t.Fatal("busy after all responses")
			}
		})
	}
}

func TestRequestFields(t *testing.T) {
	got := make(chan httpmsg.Request, 1)
	h := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		c := *r
		c.Header = append([]httpmsg.Field(nil), r.Header...)
		c.BodyReader = nil
		got <- c
		_ = w.WriteResponse(204, nil, nil)
	}}
	hs := newHarness(t, h, nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, true, true, hs.encode(":method", "GET", ":scheme", "https", ":path", "/a/b?x=1&y", ":authority", "h.test", "accept", "*/*")))
	r := hs.response(1)
	if r.status != "204" || r.header["content-length"] != "" {
		t.Fatalf("%+v", r)
	}
	req := <-got
	if req.Method != "GET" || req.Path != "/a/b" || req.RawQuery != "x=1&y" || req.RequestURI != "/a/b?x=1&y" ||
		req.Host != "h.test" || req.Scheme != "https" || req.Proto != "HTTP/2.0" || req.ProtoMajor != 2 ||
		req.StreamID != 1 || req.ContentLength != 0 || len(req.Header) != 1 || req.Header[0] != (httpmsg.Field{Name: "accept", Value: "*/*"}) ||
		req.RemoteAddr == nil {
		t.Fatalf("%+v", req)
	}
}

func echoHandler(inline bool) handlerFunc {
	return handlerFunc{
		inline: func(*httpmsg.Request) bool { return inline },
		serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
			body := r.Body
			if r.BodyReader != nil {
				var err error
				body, err = io.ReadAll(r.BodyReader)
				if err != nil {
					_ = w.WriteResponse(500, nil, []byte(err.Error()))
					return
				}
			}
			var tr []httpmsg.Field
			for _, f := range r.Trailer {
				tr = append(tr, httpmsg.Field{Name: "x-echo-" + f.Name, Value: f.Value})
			}
			if len(tr) > 0 {
				_ = w.WriteHeader(200, nil)
				_, _ = w.Write(body)
				_ = w.End(tr)
				return
			}
			_ = w.WriteResponse(200, nil, body)
		},
	}
}

func TestPostBody(t *testing.T) {
	for _, inline := range []bool{true, false} {
		hs := newHarness(t, echoHandler(inline), nil)
		hs.handshake()
		hs.send(frame.AppendHeaders(nil, 1, false, true, hs.post("/echo", "content-length", "11")))
		hs.send(frame.AppendData(nil, 1, false, []byte("hello ")))
		hs.send(frame.AppendDataPadded(nil, 1, true, []byte("world"), 7))
		r := hs.response(1)
		if r.status != "200" || string(r.body) != "hello world" {
			t.Fatalf("inline=%v %+v", inline, r)
		}
		// Trailers.
		hs.send(frame.AppendHeaders(nil, 3, false, true, hs.post("/echo")))
		hs.send(frame.AppendData(nil, 3, false, []byte("abc")))
		hs.send(frame.AppendHeaders(nil, 3, true, true, hs.encode("x-sum", "42")))
		r = hs.response(3)
		if string(r.body) != "abc" || r.trailer["x-echo-x-sum"] != "42" {
			t.Fatalf("inline=%v %+v", inline, r)
		}
	}
}

func TestContentLengthMismatch(t *testing.T) {
	hs := newHarness(t, echoHandler(true), nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, false, true, hs.post("/", "content-length", "3")))
	hs.send(frame.AppendData(nil, 1, true, []byte("ab")))
	hs.expectMalformed(1)
	hs.send(frame.AppendHeaders(nil, 3, false, true, hs.post("/", "content-length", "1")))
	hs.send(frame.AppendData(nil, 3, true, []byte("ab")))
	hs.expectMalformed(3)
	hs.send(frame.AppendHeaders(nil, 5, true, true, hs.post("/", "content-length", "1")))
	hs.expectMalformed(5)
}

func TestMalformedRequests(t *testing.T) {
	tests := []struct {
		name   string
		fields []string
	}{
		{name: "no method", fields: []string{":scheme", "http", ":path", "/"}},
		{name: "no path", fields: []string{":method", "GET", ":scheme", "http"}},
		{name: "empty path", fields: []string{":method", "GET", ":scheme", "http", ":path", ""}},
		{name: "repeated method", fields: []string{":method", "GET", ":method", "GET", ":scheme", "http", ":path", "/"}},
		{name: "unknown pseudo", fields: []string{":method", "GET", ":scheme", "http", ":path", "/", ":foo", "x"}},
		{name: "status pseudo", fields: []string{":method", "GET", ":scheme", "http", ":path", "/", ":status", "200"}},
		{name: "pseudo after regular", fields: []string{":method", "GET", ":scheme", "http", "a", "b", ":path", "/"}},
		{name: "connection", fields: []string{":method", "GET", ":scheme", "http", ":path", "/", "connection", "close"}},
		{name: "te gzip", fields: []string{":method", "GET", ":scheme", "http", ":path", "/", "te", "gzip"}},
		{name: "uppercase", fields: []string{":method", "GET", ":scheme", "http", ":path", "/", "X-Up", "1"}},
		{name: "bad value", fields: []string{":method", "GET", ":scheme", "http", ":path", "/", "x", "a\nb"}},
		{name: "bad path", fields: []string{":method", "GET", ":scheme", "http", ":path", "a"}},
	}
	hs := newHarness(t, helloHandler(true), nil)
	hs.handshake()
	id := uint32(1)
	for _, tt := range tests {
		hs.send(frame.AppendHeaders(nil, id, true, true, hs.encode(tt.fields...)))
		hs.expectMalformed(id)
		id += 2
	}
	// te: trailers is fine.
	hs.send(frame.AppendHeaders(nil, id, true, true, hs.get("/", "te", "trailers")))
	if r := hs.response(id); r.status != "200" {
		t.Fatal(r)
	}
}

func TestStreamingResponse(t *testing.T) {
	step := make(chan struct{})
	h := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		_ = w.WriteHeader(200, []httpmsg.Field{{Name: "content-type", Value: "text/event-stream"}})
		for i := range 3 {
			_, _ = w.Write([]byte{'a' + byte(i)})
			_ = w.Flush()
			<-step
		}
		_ = w.End([]httpmsg.Field{{Name: "x-done", Value: "yes"}})
	}}
	hs := newHarness(t, h, nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, true, true, hs.get("/")))
	hs.expect(frame.TypeHeaders, 1)
	for i := range 3 {
		f := hs.expect(frame.TypeData, 1)
		if string(f.Data) != string([]byte{'a' + byte(i)}) {
			t.Fatalf("chunk %d: %q", i, f.Data)
		}
		step <- struct{}{}
	}
	f := hs.expect(frame.TypeHeaders, 1)
	if !f.EndStream() {
		t.Fatal("trailers without END_STREAM")
	}
}

func TestFlowControlAndSplit(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 10000) // 100000 bytes > 65535 window
	for _, inline := range []bool{true, false} {
		h := handlerFunc{
			inline: func(*httpmsg.Request) bool { return inline },
			serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
				_ = w.WriteResponse(200, nil, body)
			},
		}
		hs := newHarness(t, h, nil)
		hs.handshake()
		hs.send(frame.AppendHeaders(nil, 1, true, true, hs.get("/")))
		hs.expect(frame.TypeHeaders, 1)
		got := 0
		for got < 65535 {
			f := hs.expect(frame.TypeData, 1)
			if len(f.Data) > 16384 {
				t.Fatalf("DATA of %d bytes", len(f.Data))
			}
			got += len(f.Data)
		}
		if got != 65535 {
			t.Fatalf("sent %d within a 65535 window", got)
		}
		if f, ok := hs.next(50 * time.Millisecond); ok {
			t.Fatalf("sent %v beyond the window", f.Type)
		}
		hs.send(frame.AppendWindowUpdate(nil, 0, 1<<20))
		if f, ok := hs.next(50 * time.Millisecond); ok {
			t.Fatalf("sent %v beyond the stream window", f.Type)
		}
		hs.send(frame.AppendWindowUpdate(nil, 1, 1<<20))
		for {
			f := hs.expect(frame.TypeData, 1)
			got += len(f.Data)
			if f.EndStream() {
				break
			}
		}
		if got != len(body) {
			t.Fatalf("got %d", got)
		}
	}
}

func TestLargeHeadersContinuation(t *testing.T) {
	big := strings.Repeat("v", 20000)
	h := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		_ = w.WriteResponse(200, []httpmsg.Field{{Name: "x-big", Value: big}}, nil)
	}}
	hs := newHarness(t, h, nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, true, true, hs.get("/")))
	f := hs.expect(frame.TypeHeaders, 1)
	if f.EndHeaders() || !f.EndStream() {
		t.Fatalf("flags %x", f.Flags)
	}
	block := append([]byte(nil), f.Data...)
	f = hs.expect(frame.TypeContinuation, 1)
	block = append(block, f.Data...)
	if !f.EndHeaders() {
		t.Fatal("want END_HEADERS")
	}
	fields, err := hs.dec.DecodeFull(block)
	if err != nil || len(fields) != 4 || fields[1].Value != big {
		t.Fatalf("%v %d", err, len(fields))
	}
}

func TestHandlerWithoutAnswer(t *testing.T) {
	h := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		if r.Path == "/stream" {
			_ = w.WriteHeader(200, nil)
			_ = w.Flush()
		}
	}}
	hs := newHarness(t, h, nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, true, true, hs.get("/")))
	if r := hs.response(1); r.status != "500" {
		t.Fatal(r)
	}
	hs.send(frame.AppendHeaders(nil, 3, true, true, hs.get("/stream")))
	hs.expect(frame.TypeHeaders, 3)
	hs.expectRST(3, frame.ErrCodeInternal)
}

func TestHeadAndBodyless(t *testing.T) {
	hs := newHarness(t, helloHandler(false), nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, true, true, hs.encode(":method", "HEAD", ":scheme", "http", ":path", "/x")))
	f := hs.expect(frame.TypeHeaders, 1)
	if !f.EndStream() {
		t.Fatal("HEAD response with DATA")
	}
}

func TestShutdown(t *testing.T) {
	release := make(chan struct{})
	h := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		<-release
		_ = w.WriteResponse(200, nil, []byte("late"))
	}}
	hs := newHarness(t, h, nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, true, true, hs.get("/")))
	testkit.Wait(t, "the handler", func() bool { return hs.c.handlers != 0 })
	hs.c.Shutdown()
	f := hs.expect(frame.TypeGoAway, 0)
	if f.LastStreamID != 1 || f.ErrCode != frame.ErrCodeNo {
		t.Fatalf("%+v", f)
	}
	hs.send(frame.AppendHeaders(nil, 3, true, true, hs.get("/")))
	if hs.fc.closed {
		t.Fatal("closed with a stream in flight")
	}
	close(release)
	if r := hs.response(1); string(r.body) != "late" {
		t.Fatal(r)
	}
	// Nothing more may come: wait a while for a frame that must not be written,
	// then the connection must be closed.
	if f, ok := hs.next(2 * time.Second); ok {
		t.Fatalf("frame after the last response: %+v", f)
	}
	if !hs.fc.closed {
		t.Fatal("not closed after the last stream")
	}
}

func TestUpgrade(t *testing.T) {
	fc := newFakeConn()
	req := &httpmsg.Request{Method: "POST", Path: "/up", RequestURI: "/up", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Host: "h", Scheme: "http", Body: []byte("payload"), Header: []httpmsg.Field{{Name: "Upgrade", Value: "h2c"},
			{Name: "Connection", Value: "Upgrade, HTTP2-Settings"}, {Name: "HTTP2-Settings", Value: "AAQAAABk"}, {Name: "Accept", Value: "*/*"}}}
	settings := frame.AppendSettings(nil, frame.Setting{ID: frame.SettingInitialWindowSize, Val: 100})[frame.HeaderLen:]
	if _, err := NewUpgradedConn(fc, echoHandler(false), testPool, nil, settings[:5], req); err != ErrBadSettings {
		t.Fatal(err)
	}
	bad := frame.AppendSettings(nil, frame.Setting{ID: frame.SettingMaxFrameSize, Val: 1})[frame.HeaderLen:]
	if _, err := NewUpgradedConn(fc, echoHandler(false), testPool, nil, bad, req); err != ErrBadSettings {
		t.Fatal(err)
	}
	seen := make(chan []httpmsg.Field, 1)
	h := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		seen <- append([]httpmsg.Field(nil), r.Header...)
		echoHandler(false).serve(r, w)
	}}
	c, err := NewUpgradedConn(fc, h, testPool, nil, settings, req)
	if err != nil {
		t.Fatal(err)
	}
	hs := &harness{t: t, fc: fc, c: c}
	hs.dec = newTestDecoder()
	t.Cleanup(func() { c.OnClose(nil) })
	hs.expect(frame.TypeSettings, 0)
	hs.send(append([]byte(clientPreface), frame.AppendSettings(nil)...))
	// The peer's window of 100 bytes from HTTP2-Settings applies to stream 1.
	r := hs.response(1)
	if r.status != "200" || string(r.body) != "payload" {
		t.Fatalf("%+v", r)
	}
	if got := <-seen; len(got) != 1 || got[0].Name != "Accept" {
		t.Fatalf("stream 1 header %v: connection fields not dropped", got)
	}
}

func TestContextCancelledOnReset(t *testing.T) {
	cancelled := make(chan error, 1)
	ready := make(chan struct{}) // the handler has its context
	h := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		ctx := requestContext(r, w)
		close(ready)
		select {
		case <-ctx.Done():
			cancelled <- ctx.Err()
		case <-time.After(2 * time.Second):
			cancelled <- nil
		}
	}}
	hs := newHarness(t, h, nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, true, true, hs.get("/")))
	<-ready
	hs.send(frame.AppendRSTStream(nil, 1, frame.ErrCodeCancel))
	if err := <-cancelled; err == nil {
		t.Fatal("context not cancelled by RST_STREAM")
	}
}

func TestCloseUnblocksHandlers(t *testing.T) {
	errs := make(chan error, 2)
	h := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		if r.Path == "/read" {
			_, err := io.ReadAll(r.BodyReader)
			errs <- err
			return
		}
		_ = w.WriteHeader(200, nil)
		buf := make([]byte, 64<<10)
		for {
			if _, err := w.Write(buf); err != nil {
				errs <- err
				return
			}
		}
	}}
	hs := newHarness(t, h, nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, false, true, hs.post("/read")))
	hs.send(frame.AppendData(nil, 1, false, []byte("partial")))
	hs.send(frame.AppendHeaders(nil, 3, true, true, hs.get("/write")))
	testkit.Wait(t, "the /read handler blocked in its read", testkit.Parked("TestCloseUnblocksHandlers", "io.ReadAll"))
	testkit.Wait(t, "the /write handler blocked in its write", testkit.Parked("TestCloseUnblocksHandlers", ").Write("))
	hs.c.OnClose(nil)
	for range 2 {
		select {
		case err := <-errs:
			if err != ErrStreamClosed {
				t.Fatalf("got %v", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("handler still blocked after OnClose")
		}
	}
}

// TestDrainAfterResponse: a worker that answered without reading the body leaves
// the stream half-closed (local): body bytes are discarded (frames still
// validated), the connection is not busy, and past maxDiscard the client is asked
// to stop with RST_STREAM NO_ERROR.
func TestDrainAfterResponse(t *testing.T) {
	hs := newHarness(t, helloHandler(false), nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, false, true, hs.get("/")))
	hs.response(1)
	hs.send(frame.AppendData(nil, 1, false, []byte("ignored")))
	for hs.c.handlers > 0 {
		hs.next(10 * time.Millisecond)
	}
	if hs.c.Busy() {
		t.Fatal("a draining stream keeps the connection busy")
	}
	hs.send(frame.AppendRSTStream(nil, 1, frame.ErrCodeCancel))
	hs.send(frame.AppendData(nil, 1, true, []byte("x")))
	hs.expectRST(1, frame.ErrCodeStreamClosed)

	hs.send(frame.AppendHeaders(nil, 3, false, true, hs.get("/")))
	hs.response(3)
	for hs.c.handlers > 0 {
		hs.next(10 * time.Millisecond)
	}
	for range 5 {
		hs.send(frame.AppendData(nil, 3, false, make([]byte, 16000)))
	}
	hs.expectRST(3, frame.ErrCodeNo)
}

func TestPoolFull(t *testing.T) {
	fc := newFakeConn()
	pool := work.NewPool(1, time.Second)
	defer pool.Stop()
	release := make(chan struct{})
	h := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		<-release
		_ = w.WriteResponse(200, nil, nil)
	}}
	hs := &harness{t: t, fc: fc, c: NewConn(fc, h, pool, nil), dec: newTestDecoder()}
	hs.enc = hpack.NewEncoder(&hs.encBuf)
	defer hs.c.OnClose(nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, true, true, hs.get("/")))
	hs.send(frame.AppendHeaders(nil, 3, true, true, hs.get("/")))
	if r := hs.response(3); r.status != "503" {
		t.Fatalf("%+v", r)
	}
	close(release)
	if r := hs.response(1); r.status != "200" {
		t.Fatalf("%+v", r)
	}
	hs.settle()
	if hs.c.Busy() {
		t.Fatal("busy after both answers")
	}
}

// TestContentLengthBody: RFC 9113 §8.1.1. A body longer or shorter than its
// content-length makes the request malformed (400 head, RST_STREAM
// PROTOCOL_ERROR), and the handler never takes a truncated or extended body for
// the real one: a streamed body's reader (worker route) fails with
// ErrContentLength, whether the handler reads as bytes arrive or after the
// fact; a buffered body (inline route) never reaches its handler.
func TestContentLengthBody(t *testing.T) {
	tests := []struct {
		name     string
		length   string
		data     []string // the last one ends the stream unless trailers follow
		trailers bool
	}{
		{name: "longer in one frame", length: "3", data: []string{"abcd"}},
		{name: "longer over frames", length: "3", data: []string{"ab", "cd"}},
		{name: "longer by a later frame", length: "2", data: []string{"ab", "c"}},
		{name: "shorter", length: "3", data: []string{"ab"}},
		{name: "shorter over frames", length: "5", data: []string{"ab", "c"}},
		{name: "empty body", length: "3", data: []string{""}},
		{name: "shorter, then trailers", length: "3", data: []string{"ab"}, trailers: true},
	}
	for _, inline := range []bool{false, true} {
		for _, readEarly := range []bool{false, true} {
			if inline && readEarly {
				continue
			}
			mode := map[bool]string{true: "inline", false: "worker"}[inline]
			if readEarly {
				mode += " reading as it arrives"
			}
			for _, tt := range tests {
				t.Run(mode+"/"+tt.name, func(t *testing.T) {
					type result struct {
						body []byte
						err  error
					}
					got := make(chan result, 1)
					started := make(chan struct{})
					h := handlerFunc{
						inline: func(*httpmsg.Request) bool { return inline },
						serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
							if r.StreamID != 1 { // the follow-up request
								body := r.Body
								if r.BodyReader != nil {
									body, _ = io.ReadAll(r.BodyReader)
								}
								_ = w.WriteResponse(200, nil, body)
								return
							}
							close(started)
							body, err := r.Body, error(nil)
							if r.BodyReader != nil {
								if !readEarly {
									testkit.Slow(20 * time.Millisecond) // a sleep: the whole body has come before the handler reads it
								}
								body, err = io.ReadAll(r.BodyReader)
							}
							got <- result{body, err}
							_ = w.WriteResponse(200, nil, body)
						},
					}
					hs := newHarness(t, h, nil)
					hs.handshake()
					hs.send(frame.AppendHeaders(nil, 1, false, true, hs.post("/", "content-length", tt.length)))
					if !inline {
						<-started
					}
					for i, d := range tt.data {
						if readEarly {
							testkit.Slow(5 * time.Millisecond) // a sleep: the handler waits for each DATA frame
						}
						hs.send(frame.AppendData(nil, 1, i == len(tt.data)-1 && !tt.trailers, []byte(d)))
					}
					if tt.trailers {
						hs.send(frame.AppendHeaders(nil, 1, true, true, hs.encode("x-t", "1")))
					}
					hs.expectMalformed(1)
					if inline {
						select {
						case r := <-got:
							t.Fatalf("the handler got body %q (%v)", r.body, r.err)
						case <-time.After(20 * time.Millisecond):
						}
					} else {
						r := <-got
						if !errors.Is(r.err, ErrContentLength) {
							t.Fatalf("body %q, error %v; want ErrContentLength", r.body, r.err)
						}
					}
					// The connection serves on.
					hs.send(frame.AppendHeaders(nil, 3, false, true, hs.post("/", "content-length", "2")))
					hs.send(frame.AppendData(nil, 3, true, []byte("ok")))
					if r := hs.response(3); r.status != "200" || string(r.body) != "ok" {
						t.Fatalf("%+v", r)
					}
				})
			}
		}
	}
}
