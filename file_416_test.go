package celeris

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestFileRangeNotSatisfiableUsesErrorHandler: c.File's 416 (RFC 9110 §15.5.17)
// goes through the error handler as its 412 does, keeping Content-Range.
func TestFileRangeNotSatisfiableUsesErrorHandler(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, Config{ErrorHandler: func(c *Context, err error) {
		_ = c.JSON(c.ResultStatus(err), map[string]string{"error": err.Error()})
	}}, func(s *Server) {
		s.GET("/f", func(c *Context) error { return c.File(filepath.Join(dir, "f.txt")) })
	})
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		tests := []struct {
			name, hname, hval, body, crange string
			code                            int
		}{
			{name: "416", hname: "Range", hval: "bytes=100-", code: 416, body: `{"error":"416 Requested Range Not Satisfiable"}`, crange: "bytes */10"},
			{name: "412", hname: "If-Match", hval: `"other"`, code: 412, body: `{"error":"412 Precondition Failed"}`},
			{name: "206", hname: "Range", hval: "bytes=2-3", code: 206, body: "23", crange: "bytes 2-3/10"},
		}
		for _, tt := range tests {
			req, _ := http.NewRequest("GET", "http://"+addr+"/f", nil)
			req.Header.Set(tt.hname, tt.hval)
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := bodyString(t, resp)
			if resp.StatusCode != tt.code || body != tt.body || resp.Header.Get("Content-Range") != tt.crange {
				t.Errorf("%s: %d %q Content-Range %q, want %d %q %q", tt.name, resp.StatusCode, body,
					resp.Header.Get("Content-Range"), tt.code, tt.body, tt.crange)
			}
		}
	})
}
