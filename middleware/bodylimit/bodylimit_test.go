package bodylimit_test

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/bodylimit"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
)

// hideLen hides the length of r from net/http, which then sends the body chunked
// (HTTP/1.1) or without content-length (HTTP/2).
type hideLen struct{ r io.Reader }

func (h hideLen) Read(p []byte) (int, error) { return h.r.Read(p) }

// rawPost sends a POST over a new connection, writing the body concurrently with
// reading the answer (the server may answer, and close, before reading the body),
// and returns the status and body of the response.
func rawPost(t *testing.T, addr, path string, size int, chunked bool) (int, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	body := strings.Repeat("x", size)
	var msg string
	if chunked {
		msg = "POST " + path + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
		if size > 0 {
			msg += strconv.FormatInt(int64(size), 16) + "\r\n" + body + "\r\n"
		}
		msg += "0\r\n\r\n"
	} else {
		msg = "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(size) + "\r\n\r\n" + body
	}
	go func() { _, _ = io.WriteString(conn, msg) }() // errors show in the read
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("POST %s (%d bytes): %v", path, size, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

func TestBodyLimit(t *testing.T) {
	echoLen := func(c *celeris.Context) error {
		b, err := c.Body()
		if err != nil {
			return err
		}
		return c.String(200, strconv.Itoa(len(b)))
	}
	_, addr := mwtest.StartConfig(t, celeris.Config{MaxRequestBodySize: 8 << 10}, func(s *celeris.Server) {
		s.POST("/small", echoLen, bodylimit.New(bodylimit.Config{Limit: 1024}))
		s.POST("/big", echoLen, bodylimit.New(bodylimit.Config{Limit: 1 << 20}))
		s.POST("/default", echoLen, bodylimit.New(bodylimit.Config{}))
	})
	tests := []struct {
		name, path string
		size       int
		chunked    bool
		status     int
	}{
		{name: "empty", path: "/small", size: 0, status: 200},
		{name: "at limit", path: "/small", size: 1024, status: 200},
		{name: "over limit", path: "/small", size: 1025, status: 413},
		{name: "far over limit", path: "/small", size: 6000, status: 413},
		{name: "chunked empty", path: "/small", size: 0, chunked: true, status: 200},
		{name: "chunked at limit", path: "/small", size: 1024, chunked: true, status: 200},
		{name: "chunked over limit", path: "/small", size: 1025, chunked: true, status: 413},
		{name: "server limit first", path: "/big", size: 9000, status: 413},
		{name: "server limit first, chunked", path: "/big", size: 9000, chunked: true, status: 413},
		{name: "default under", path: "/default", size: 5000, status: 200},
	}
	for _, tt := range tests {
		status, got := rawPost(t, addr, tt.path, tt.size, tt.chunked)
		if status != tt.status {
			t.Errorf("%s: status %d (%q), want %d", tt.name, status, got, tt.status)
			continue
		}
		if tt.status == 200 && got != strconv.Itoa(tt.size) {
			t.Errorf("%s: handler read %s bytes, want %d", tt.name, got, tt.size)
		}
		if tt.status == 413 && tt.path == "/small" && !strings.Contains(got, "Too Large") {
			t.Errorf("%s: body %q", tt.name, got)
		}
	}

	// Over both protocols with net/http's client: small bodies, which the server
	// receives whole before the handler runs.
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		for _, tt := range []struct {
			size    int
			chunked bool
			status  int
		}{
			{size: 1024, status: 200},
			{size: 1025, status: 413},
			{size: 1024, chunked: true, status: 200},
			{size: 1025, chunked: true, status: 413},
		} {
			var body io.Reader = bytes.NewReader(bytes.Repeat([]byte("x"), tt.size))
			if tt.chunked {
				body = hideLen{body}
			}
			resp, got := mwtest.Do(t, client, "POST", "http://"+addr+"/small", nil, body)
			if resp.StatusCode != tt.status {
				t.Errorf("%d bytes (chunked %v): %d %q", tt.size, tt.chunked, resp.StatusCode, got)
			}
		}
	})
}
