package h1client

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestParseHead(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Head
		wantN   int
		wantErr error
	}{
		{
			name:  "content-length",
			in:    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK",
			want:  Head{Status: 200, ContentLength: 2},
			wantN: 38,
		},
		{
			name:  "chunked overrides length",
			in:    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n",
			want:  Head{Status: 200, ContentLength: -1, Chunked: true},
			wantN: 72,
		},
		{
			name:  "close, no reason, odd case",
			in:    "HTTP/1.0 404\r\nCONNECTION: keep-alive, Close\r\n\r\n",
			want:  Head{Status: 404, ContentLength: -1, Close: true},
			wantN: 47,
		},
		{name: "incomplete", in: "HTTP/1.1 200 OK\r\nContent-Len", wantErr: ErrNeedMore},
		{name: "bad version", in: "HTTP/2.0 200 OK\r\n\r\n", wantErr: ErrMalformed},
		{name: "bad status", in: "HTTP/1.1 2x0 OK\r\n\r\n", wantErr: ErrMalformed},
		{name: "no colon", in: "HTTP/1.1 200 OK\r\nbogus\r\n\r\n", wantErr: ErrMalformed},
		{name: "bad length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", wantErr: ErrMalformed},
		{
			name:    "conflicting lengths",
			in:      "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
			wantErr: ErrMalformed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Head
			n, err := ParseHead([]byte(tt.in), &h)
			if err != tt.wantErr {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if n != tt.wantN || h != tt.want {
				t.Fatalf("got n=%d %+v, want n=%d %+v", n, h, tt.wantN, tt.want)
			}
		})
	}
}

func TestChunkedDecoder(t *testing.T) {
	in := "5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\nNEXT"
	// Every split point must give the same answer.
	for split := 0; split <= len(in); split++ {
		var d ChunkedDecoder
		var body []byte
		sink := func(b []byte) { body = append(body, b...) }
		buf := []byte(in[:split])
		n, done, err := d.Feed(buf, sink)
		if err != nil {
			t.Fatalf("split %d: %v", split, err)
		}
		if !done {
			buf = append(buf[n:], in[split:]...)
			var m int
			m, done, err = d.Feed(buf, sink)
			if err != nil {
				t.Fatalf("split %d: second feed: %v", split, err)
			}
			buf = buf[m:]
		} else {
			buf = append(buf[n:], in[split:]...)
		}
		if !done {
			t.Fatalf("split %d: not done", split)
		}
		if string(body) != "hello0123456789" {
			t.Fatalf("split %d: body %q", split, body)
		}
		if string(buf) != "NEXT" {
			t.Fatalf("split %d: left %q, want NEXT", split, buf)
		}
	}
}

func TestChunkedMalformed(t *testing.T) {
	for _, in := range []string{"zz\r\n", "5\r\nhelloXX", "\r\n"} {
		var d ChunkedDecoder
		if _, _, err := d.Feed([]byte(in), nil); err != ErrMalformed {
			t.Errorf("%q: err = %v, want ErrMalformed", in, err)
		}
	}
}

// pipelined is three responses back to back, in the three framings.
const pipelined = "HTTP/1.1 100 Continue\r\n\r\n" +
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nDate: x\r\n\r\nOK" +
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n" +
	"HTTP/1.1 204 No Content\r\nContent-Length: 99\r\n\r\n" +
	"HTTP/1.1 500 Oops\r\nConnection: close\r\n\r\ntail"

func TestReaderPipelined(t *testing.T) {
	readers := map[string]func() io.Reader{
		"whole":    func() io.Reader { return strings.NewReader(pipelined) },
		"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(pipelined)) },
		"half":     func() io.Reader { return iotest.HalfReader(strings.NewReader(pipelined)) },
	}
	want := []Response{
		{Status: 200, BodyLen: 2, Body: []byte("OK")},
		{Status: 200, BodyLen: 5, Body: []byte("abcde")},
		{Status: 204},
		{Status: 500, BodyLen: 4, Body: []byte("tail"), Close: true},
	}
	for name, mk := range readers {
		t.Run(name, func(t *testing.T) {
			// A small buffer forces compaction and body reads across fills.
			r := NewReader(mk(), 64, true)
			var resp Response
			for i, w := range want {
				if err := r.ReadResponse(&resp); err != nil {
					t.Fatalf("response %d: %v", i, err)
				}
				if resp.Status != w.Status || resp.BodyLen != w.BodyLen || resp.Close != w.Close ||
					!bytes.Equal(resp.Body, w.Body) {
					t.Fatalf("response %d: got %+v (body %q), want %+v", i, resp, resp.Body, w)
				}
			}
			if err := r.ReadResponse(&resp); err != ErrServerClosed {
				t.Fatalf("after last: err = %v, want ErrServerClosed", err)
			}
		})
	}
}

func TestReaderLargeBody(t *testing.T) {
	body := strings.Repeat("x", 100000)
	in := "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + body +
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\ny"
	r := NewReader(strings.NewReader(in), 4096, false)
	var resp Response
	if err := r.ReadResponse(&resp); err != nil || resp.BodyLen != 100000 || resp.Body != nil {
		t.Fatalf("first: %v %+v", err, resp)
	}
	if err := r.ReadResponse(&resp); err != nil || resp.BodyLen != 1 {
		t.Fatalf("second: %v %+v", err, resp)
	}
}

func TestReaderErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		size int
		want error
	}{
		{name: "truncated body", in: "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", size: 64, want: io.ErrUnexpectedEOF},
		{name: "truncated head", in: "HTTP/1.1 200 OK\r\n", size: 64, want: io.ErrUnexpectedEOF},
		{name: "head too large", in: "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", 100) + "\r\n\r\n", size: 64, want: ErrHeadTooLarge},
		{name: "garbage", in: "hello world\r\n\r\n", size: 64, want: ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.in), tt.size, false)
			var resp Response
			if err := r.ReadResponse(&resp); err != tt.want {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestAppendRequest(t *testing.T) {
	got := string(AppendRequest(nil, Request{Method: "POST", Path: "/upload", Host: "h:1", Body: []byte("abc")}))
	want := "POST /upload HTTP/1.1\r\nHost: h:1\r\nUser-Agent: celeris-bench\r\n" +
		"Content-Type: application/octet-stream\r\nContent-Length: 3\r\n\r\nabc"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// TestConnPipeline runs RoundTrip against a scripted server over a real socket.
func TestConnPipeline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 4096)
		got := 0
		for got < 3 {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			got += bytes.Count(buf[:n], []byte("\r\n\r\n"))
		}
		c.Write([]byte(strings.Repeat("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK", 3)))
	}()
	c, err := Dial(ln.Addr().String(), Request{Method: "GET", Path: "/bench", Host: "x"}, 3, time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := 0
	err = c.RoundTrip(func(resp *Response, _ time.Duration) {
		if resp.Status != 200 || string(resp.Body) != "OK" {
			t.Errorf("response %d: %+v", n, resp)
		}
		n++
	})
	if err != nil || n != 3 {
		t.Fatalf("RoundTrip: err=%v, responses=%d", err, n)
	}
}
