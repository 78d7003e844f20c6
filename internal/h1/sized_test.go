package h1

import (
	"errors"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// sizedHandler answers with WriteHeaderLength(200, 10) and writes the body its
// path names: /exact 10 bytes, /short 4, /long 12 (in two writes).
type sizedHandler struct{ errs []error }

func (*sizedHandler) Prepare(*httpmsg.Request) bool { return true }

func (h *sizedHandler) Serve(req *httpmsg.Request, w httpmsg.ResponseWriter) {
	sw := w.(httpmsg.SizedWriter)
	if err := sw.WriteHeaderLength(200, []httpmsg.Field{{Name: "Content-Type", Value: "text/plain"}}, 10); err != nil {
		h.errs = append(h.errs, err)
		return
	}
	var err error
	switch req.Path {
	case "/exact":
		_, err = w.Write([]byte("0123456789"))
	case "/short":
		_, err = w.Write([]byte("0123"))
	case "/long":
		_, _ = w.Write([]byte("012345"))
		_, err = w.Write([]byte("678901"))
	}
	h.errs = append(h.errs, err, w.End(nil))
}

func TestWriteHeaderLength(t *testing.T) {
	tests := []struct {
		req      string
		wire     string
		errs     []error
		closeOut bool
	}{
		{req: "GET /exact HTTP/1.1\r\nHost: h\r\n\r\n", wire: "Content-Length: 10\r\n\r\n0123456789", errs: []error{nil, nil}},
		{req: "GET /long HTTP/1.1\r\nHost: h\r\n\r\n", wire: "Content-Length: 10\r\n\r\n0123456789", errs: []error{httpmsg.ErrLength, nil}},
		{req: "GET /short HTTP/1.1\r\nHost: h\r\n\r\n", wire: "Content-Length: 10\r\n\r\n0123", errs: []error{nil, httpmsg.ErrLength}, closeOut: true},
		{req: "HEAD /exact HTTP/1.1\r\nHost: h\r\n\r\n", wire: "Content-Length: 10\r\n\r\n", errs: []error{nil, nil}},
		// HTTP/1.0 has no chunked coding: a known length keeps the connection.
		{req: "GET /exact HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", wire: "Content-Length: 10\r\nConnection: keep-alive\r\n\r\n0123456789", errs: []error{nil, nil}},
	}
	for _, tt := range tests {
		mc := &memConn{}
		h := &sizedHandler{}
		cn := NewConn(mc, &ServerConfig{Handler: h})
		if _, err := cn.OnData([]byte(tt.req)); err != nil {
			t.Fatalf("%q: %v", tt.req, err)
		}
		out := string(mc.out)
		if !strings.HasSuffix(out, tt.wire) || strings.Contains(out, "chunked") {
			t.Errorf("%q: wire %q, want it to end with %q", tt.req, out, tt.wire)
		}
		for i := range tt.errs {
			if i >= len(h.errs) || !errors.Is(h.errs[i], tt.errs[i]) {
				t.Errorf("%q: errors %v, want %v", tt.req, h.errs, tt.errs)
				break
			}
		}
		if closing := cn.closing; closing != tt.closeOut {
			t.Errorf("%q: closing %v, want %v", tt.req, closing, tt.closeOut)
		}
	}
}
