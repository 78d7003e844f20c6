package static_test

import (
	"net/http"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/static"
)

// TestRangeNotSatisfiableUsesErrorHandler: the middleware's 416 (RFC 9110
// §15.5.17) goes through the server's error handler, keeping Content-Range.
func TestRangeNotSatisfiableUsesErrorHandler(t *testing.T) {
	_, addr := mwtest.StartConfig(t, celeris.Config{ErrorHandler: func(c *celeris.Context, err error) {
		_ = c.JSON(c.ResultStatus(err), map[string]string{"error": err.Error()})
	}}, func(s *celeris.Server) {
		s.GET("/static/*filepath", static.New(static.Config{FS: files, Root: "public"}))
		s.GET("/small/*filepath", static.New(static.Config{FS: files, Root: "public", MaxInMemory: 1024}))
	})
	mwtest.Run(t, addr, func(t *testing.T, cl *http.Client) {
		for _, path := range []string{"/static/range.txt", "/small/big.txt"} {
			resp, body := mwtest.Get(t, cl, "http://"+addr+path, mwtest.H("Range", "bytes=200000-")) // past the end of both files
			if want := `{"error":"416 Requested Range Not Satisfiable"}`; resp.StatusCode != 416 || body != want ||
				resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s: %d %q %q, want 416 %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), body, want)
			}
			if cr := resp.Header.Get("Content-Range"); cr == "" || cr[:8] != "bytes */" {
				t.Errorf("%s: Content-Range %q", path, cr)
			}
		}
	})
}
