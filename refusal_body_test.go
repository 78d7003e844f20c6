package celeris

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/internal/h2raw"
)

// jsonRefusal is a Config.RefusalBody for tests: a JSON problem document.
func jsonRefusal(status int) (string, []byte) {
	return "application/problem+json", []byte(`{"status":` + strconv.Itoa(status) + `}`)
}

// TestRefusalBodyH1: the answers to requests refused before any handler exists
// carry Config.RefusalBody's body and Content-Type (with RefusalHeader's
// fields), so that an API answers them in its own format too.
func TestRefusalBodyH1(t *testing.T) {
	_, addr := startServer(t, Config{MaxRequestBodySize: 1 << 20, RefusalHeader: refusedHeader, RefusalBody: jsonRefusal}, testRoutes)
	for _, tt := range []struct {
		name, req string
		status    int
	}{
		{name: "no host", req: "GET /bench HTTP/1.1\r\n\r\n", status: 400},
		{name: "uri too long", req: "GET /" + strings.Repeat("a", 9<<10) + " HTTP/1.1\r\nHost: x\r\n\r\n", status: 414},
		{name: "header too large", req: "GET /bench HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("b", 70<<10) + "\r\n\r\n", status: 431},
		{name: "body too large", req: "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n", status: 413},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rc := dialRaw(t, addr)
			rc.send(tt.req)
			resp := rc.readResponse("GET")
			body := bodyString(t, resp)
			want := `{"status":` + strconv.Itoa(tt.status) + `}`
			if resp.StatusCode != tt.status || body != want ||
				resp.Header.Get("Content-Type") != "application/problem+json" ||
				resp.Header.Get("X-Refused") != strconv.Itoa(tt.status) {
				t.Fatalf("%d %q %v, want %d %s", resp.StatusCode, body, resp.Header, tt.status, want)
			}
			rc.expectClosed()
		})
	}
}

// TestRefusalBodyH2CDisabled: the 505 to an HTTP/2 preface with DisableH2C.
func TestRefusalBodyH2CDisabled(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{DisableH2C: true, RefusalBody: jsonRefusal}, testRoutes)
	rc := dialRaw(t, addr)
	rc.send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	resp := rc.readResponse("PRI")
	if body := bodyString(t, resp); resp.StatusCode != 505 || body != `{"status":505}` ||
		resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("%d %q %v", resp.StatusCode, body, resp.Header)
	}
}

// TestRefusalBodyH2: HTTP/2's own refusals (413 for a declared body over the
// limit) carry the body too.
func TestRefusalBodyH2(t *testing.T) {
	_, addr := startServer(t, Config{MaxRequestBodySize: 1 << 10, RefusalHeader: refusedHeader, RefusalBody: jsonRefusal}, testRoutes)
	big, _ := http.NewRequest("POST", "http://"+addr+"/upload", bytes.NewReader(make([]byte, 4<<10)))
	resp, err := h2cClient().Do(big)
	if err != nil {
		t.Fatal(err)
	}
	body := bodyString(t, resp)
	if resp.ProtoMajor != 2 || resp.StatusCode != 413 || body != `{"status":413}` ||
		resp.Header.Get("Content-Type") != "application/problem+json" || resp.Header.Get("X-Refused") != "413" {
		t.Fatalf("%s %d %q %v", resp.Proto, resp.StatusCode, body, resp.Header)
	}
}

// TestRefusalBodyH2Raw: HTTP/2's 431 (header list over the limit) and 400
// (malformed request) carry the body too.
func TestRefusalBodyH2Raw(t *testing.T) {
	_, addr := startServer(t, Config{MaxHeaderBytes: 4 << 10, RefusalBody: jsonRefusal}, testRoutes)
	var many []hpack.HeaderField
	for i := range 40 {
		many = append(many, hpack.HeaderField{Name: "x-f" + strconv.Itoa(i), Value: strings.Repeat("h", 200)})
	}
	for _, tt := range []struct {
		status string
		extra  []hpack.HeaderField
	}{
		{status: "431", extra: many},
		{status: "400", extra: []hpack.HeaderField{{Name: "connection", Value: "close"}}},
	} {
		fields, body, err := h2raw.GetBody(addr, "/bench", tt.extra...)
		if err != nil {
			t.Fatal(err)
		}
		if fields[":status"] != tt.status || fields["content-type"] != "application/problem+json" ||
			string(body) != `{"status":`+tt.status+`}` {
			t.Errorf("%v %q, want %s with the refusal body", fields, body, tt.status)
		}
	}
}
