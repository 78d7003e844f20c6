package static_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/static"
)

var (
	mod   = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	big   = strings.Repeat("0123456789", 10000) // 100,000 bytes: streamed
	files = fstest.MapFS{
		"public/index.html":      {Data: []byte("<h1>home</h1>"), ModTime: mod},
		"public/css/site.css":    {Data: []byte("body{color:red}"), ModTime: mod},
		"public/docs/index.html": {Data: []byte("<h1>docs</h1>"), ModTime: mod},
		"public/empty/keep":      {Data: nil, ModTime: mod}, // makes "empty" a directory
		"public/a b.txt":         {Data: []byte("spaced"), ModTime: mod},
		"public/range.txt":       {Data: []byte("0123456789"), ModTime: mod},
		"public/noext":           {Data: []byte("plain words"), ModTime: mod},
		"public/blob":            {Data: []byte{0x00, 0x01, 0x02, 0xff}, ModTime: mod},
		"public/embedded.txt":    {Data: []byte("no mod time")},
		"public/big.txt":         {Data: []byte(big), ModTime: mod},
		"public/.env":            {Data: []byte("SECRET=1"), ModTime: mod},
		"public/.git/config":     {Data: []byte("[core]"), ModTime: mod},
		"secret.txt":             {Data: []byte("TOP SECRET"), ModTime: mod},
	}
)

func startStatic(t *testing.T) string {
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		h := static.New(static.Config{FS: files, Root: "public", CacheControl: "public, max-age=60"})
		s.GET("/static/*filepath", h)
		s.POST("/static/*filepath", h)
		s.GET("/dot/*filepath", static.New(static.Config{FS: files, Root: "public", Dotfiles: true}))
		s.GET("/noindex/*path", static.New(static.Config{FS: files, Root: "public", Param: "path", Index: "-"}))
		s.GET("/small/*filepath", static.New(static.Config{FS: files, Root: "public"}))
	})
	return addr
}

func TestServe(t *testing.T) {
	addr := startStatic(t)
	lastMod := mod.Format(http.TimeFormat)
	tests := []struct {
		name, method, path string
		header             http.Header
		status             int
		body, ctype        string
		location           string
		multipart          []string // a multipart/byteranges answer holding these parts
	}{
		{name: "file", path: "/static/css/site.css", status: 200, body: "body{color:red}", ctype: "text/css; charset=utf-8"},
		{name: "root index", path: "/static/", status: 200, body: "<h1>home</h1>", ctype: "text/html; charset=utf-8"},
		{name: "dir index", path: "/static/docs/", status: 200, body: "<h1>docs</h1>", ctype: "text/html; charset=utf-8"},
		{name: "dir redirect", path: "/static/docs", status: 301, location: "./docs/"},
		{name: "dir redirect keeps query", path: "/static/docs?v=2", status: 301, location: "./docs/?v=2"},
		{name: "dir without index", path: "/static/empty/", status: 404},
		{name: "index disabled", path: "/noindex/docs/", status: 404},
		{name: "index disabled, file", path: "/noindex/range.txt", status: 200, body: "0123456789"},
		{name: "missing", path: "/static/nope.txt", status: 404},
		{name: "escaped space", path: "/static/a%20b.txt", status: 200, body: "spaced"},
		{name: "sniffed text", path: "/static/noext", status: 200, body: "plain words", ctype: "text/plain; charset=utf-8"},
		{name: "sniffed binary", path: "/static/blob", status: 200, body: "\x00\x01\x02\xff", ctype: "application/octet-stream"},
		{name: "dotfile hidden", path: "/static/.env", status: 404},
		{name: "dot dir hidden", path: "/static/.git/config", status: 404},
		{name: "dotfile allowed", path: "/dot/.env", status: 200, body: "SECRET=1"},
		{name: "repeated slashes", path: "/static//css//site.css", status: 200, body: "body{color:red}"},
		{name: "dot segment", path: "/static/./css/./site.css", status: 200, body: "body{color:red}"},
		{name: "POST", method: "POST", path: "/static/css/site.css", status: 405},
		{name: "HEAD", method: "HEAD", path: "/static/css/site.css", status: 200, ctype: "text/css; charset=utf-8"},

		{name: "If-None-Match", path: "/static/range.txt", header: mwtest.H("If-None-Match", `"x", `+tagOf(10, mod)), status: 304},
		{name: "If-None-Match *", path: "/static/range.txt", header: mwtest.H("If-None-Match", "*"), status: 304},
		{name: "If-None-Match other", path: "/static/range.txt", header: mwtest.H("If-None-Match", `"x"`), status: 200, body: "0123456789"},
		{name: "If-Modified-Since same", path: "/static/range.txt", header: mwtest.H("If-Modified-Since", lastMod), status: 304},
		{name: "If-Modified-Since later", path: "/static/range.txt", header: mwtest.H("If-Modified-Since", mod.Add(time.Hour).Format(http.TimeFormat)), status: 304},
		{name: "If-Modified-Since earlier", path: "/static/range.txt", header: mwtest.H("If-Modified-Since", mod.Add(-time.Second).Format(http.TimeFormat)), status: 200, body: "0123456789"},
		{name: "If-None-Match wins over If-Modified-Since", path: "/static/range.txt",
			header: mwtest.H("If-None-Match", `"x"`, "If-Modified-Since", lastMod), status: 200, body: "0123456789"},

		{name: "range", path: "/static/range.txt", header: mwtest.H("Range", "bytes=2-4"), status: 206, body: "234"},
		{name: "range open", path: "/static/range.txt", header: mwtest.H("Range", "bytes=7-"), status: 206, body: "789"},
		{name: "range suffix", path: "/static/range.txt", header: mwtest.H("Range", "bytes=-3"), status: 206, body: "789"},
		{name: "range suffix longer than file", path: "/static/range.txt", header: mwtest.H("Range", "bytes=-30"), status: 206, body: "0123456789"},
		{name: "range end clamped", path: "/static/range.txt", header: mwtest.H("Range", "bytes=8-100"), status: 206, body: "89"},
		{name: "range past end", path: "/static/range.txt", header: mwtest.H("Range", "bytes=10-"), status: 416},
		{name: "range suffix zero", path: "/static/range.txt", header: mwtest.H("Range", "bytes=-0"), status: 416},
		{name: "several ranges", path: "/static/range.txt", header: mwtest.H("Range", "bytes=0-1,4-5"), status: 206,
			multipart: []string{"Content-Range: bytes 0-1/10\r\n\r\n01\r\n", "Content-Range: bytes 4-5/10\r\n\r\n45\r\n"}},
		{name: "several streamed ranges", path: "/small/big.txt", header: mwtest.H("Range", "bytes=0-1,99998-"), status: 206,
			multipart: []string{"Content-Range: bytes 0-1/100000\r\n\r\n01\r\n", "Content-Range: bytes 99998-99999/100000\r\n\r\n89\r\n"}},
		{name: "If-Match other", path: "/static/range.txt", header: mwtest.H("If-Match", `"x"`), status: 412},
		{name: "If-Match same", path: "/static/range.txt", header: mwtest.H("If-Match", tagOf(10, mod)), status: 200, body: "0123456789"},
		{name: "If-Unmodified-Since earlier", path: "/static/range.txt", header: mwtest.H("If-Unmodified-Since", mod.Add(-time.Hour).Format(http.TimeFormat)), status: 412},
		{name: "If-Unmodified-Since same", path: "/static/range.txt", header: mwtest.H("If-Unmodified-Since", lastMod), status: 200, body: "0123456789"},
		{name: "malformed range", path: "/static/range.txt", header: mwtest.H("Range", "bytes=x-1"), status: 200, body: "0123456789"},
		{name: "inverted range", path: "/static/range.txt", header: mwtest.H("Range", "bytes=5-2"), status: 200, body: "0123456789"},
		{name: "other unit", path: "/static/range.txt", header: mwtest.H("Range", "items=0-1"), status: 200, body: "0123456789"},
		{name: "If-Range tag match", path: "/static/range.txt", header: mwtest.H("Range", "bytes=0-0", "If-Range", tagOf(10, mod)), status: 206, body: "0"},
		{name: "If-Range tag stale", path: "/static/range.txt", header: mwtest.H("Range", "bytes=0-0", "If-Range", `"old"`), status: 200, body: "0123456789"},
		{name: "If-Range date match", path: "/static/range.txt", header: mwtest.H("Range", "bytes=0-0", "If-Range", lastMod), status: 206, body: "0"},
		{name: "If-Range date stale", path: "/static/range.txt", header: mwtest.H("Range", "bytes=0-0", "If-Range", mod.Add(-time.Hour).Format(http.TimeFormat)), status: 200, body: "0123456789"},

		{name: "streamed", path: "/small/big.txt", status: 200, body: big, ctype: "text/plain; charset=utf-8"},
		{name: "streamed range", path: "/small/big.txt", header: mwtest.H("Range", "bytes=1000-1009"), status: 206, body: "0123456789"},
		{name: "range of 64 KiB and more", path: "/small/big.txt", header: mwtest.H("Range", "bytes=10-"), status: 206, body: big[10:]},
		{name: "streamed suffix", path: "/small/big.txt", header: mwtest.H("Range", "bytes=-5"), status: 206, body: "56789"},
		{name: "streamed 304", path: "/small/big.txt", header: mwtest.H("If-None-Match", tagOf(int64(len(big)), mod)), status: 304},
	}
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		for _, tt := range tests {
			method := tt.method
			if method == "" {
				method = "GET"
			}
			resp, body := mwtest.Do(t, client, method, "http://"+addr+tt.path, tt.header, nil)
			if resp.StatusCode != tt.status {
				t.Errorf("%s: status %d (%q), want %d", tt.name, resp.StatusCode, body, tt.status)
				continue
			}
			if tt.multipart != nil {
				if !strings.HasPrefix(resp.Header.Get("Content-Type"), "multipart/byteranges; boundary=") ||
					resp.ContentLength != int64(len(body)) {
					t.Errorf("%s: Content-Type %q, Content-Length %d for %d bytes", tt.name, resp.Header.Get("Content-Type"), resp.ContentLength, len(body))
				}
				for _, part := range tt.multipart {
					if !strings.Contains(body, part) {
						t.Errorf("%s: no part %q in %q", tt.name, part, body)
					}
				}
			} else if (tt.status == 200 || tt.status == 206) && body != tt.body {
				t.Errorf("%s: body %.40q, want %.40q", tt.name, body, tt.body)
			}
			if tt.ctype != "" && resp.Header.Get("Content-Type") != tt.ctype {
				t.Errorf("%s: Content-Type %q, want %q", tt.name, resp.Header.Get("Content-Type"), tt.ctype)
			}
			if tt.location != resp.Header.Get("Location") {
				t.Errorf("%s: Location %q, want %q", tt.name, resp.Header.Get("Location"), tt.location)
			}
			switch tt.status {
			case 200, 206, 304:
				if strings.HasPrefix(tt.path, "/static/") && (resp.Header.Get("ETag") == "" ||
					resp.Header.Get("Last-Modified") != lastMod || resp.Header.Get("Cache-Control") != "public, max-age=60") {
					t.Errorf("%s: validators %v", tt.name, resp.Header)
				}
				if tt.status == 304 && body != "" {
					t.Errorf("%s: 304 with body %q", tt.name, body)
				}
			}
			if tt.status == 206 && tt.multipart == nil && !strings.HasPrefix(resp.Header.Get("Content-Range"), "bytes ") {
				t.Errorf("%s: Content-Range %q", tt.name, resp.Header.Get("Content-Range"))
			}
			if tt.status == 416 && resp.Header.Get("Content-Range") != "bytes */10" {
				t.Errorf("%s: Content-Range %q", tt.name, resp.Header.Get("Content-Range"))
			}
			if tt.method == "POST" && resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s: Allow %q", tt.name, resp.Header.Get("Allow"))
			}
		}

		resp, _ := mwtest.Get(t, client, "http://"+addr+"/static/range.txt", mwtest.H("Range", "bytes=2-4"))
		if cr := resp.Header.Get("Content-Range"); cr != "bytes 2-4/10" {
			t.Errorf("Content-Range %q", cr)
		}
		resp, _ = mwtest.Do(t, client, "HEAD", "http://"+addr+"/static/css/site.css", nil, nil)
		if resp.ContentLength != int64(len("body{color:red}")) {
			t.Errorf("HEAD Content-Length %d", resp.ContentLength)
		}
		resp, body := mwtest.Get(t, client, "http://"+addr+"/static/embedded.txt", nil)
		if body != "no mod time" || resp.Header.Get("Last-Modified") != "" || !strings.HasPrefix(resp.Header.Get("ETag"), `"b-`) {
			t.Errorf("zero ModTime: %q %v", body, resp.Header)
		}
		tag := resp.Header.Get("ETag")
		if resp, _ := mwtest.Get(t, client, "http://"+addr+"/static/embedded.txt", mwtest.H("If-None-Match", tag)); resp.StatusCode != 304 {
			t.Errorf("zero ModTime revalidation: %d", resp.StatusCode)
		}
	})
}

// tagOf is the ETag the handler gives a file with a ModTime.
func tagOf(size int64, mod time.Time) string {
	return `"` + hex(size) + "-" + hex(mod.UnixNano()) + `"`
}

func hex(n int64) string { return strconv.FormatInt(n, 16) }

func TestTraversal(t *testing.T) {
	addr := startStatic(t)
	attacks := []string{
		"/static/../secret.txt",
		"/static/%2e%2e/secret.txt",
		"/static/%2E%2E/secret.txt",
		"/static/..%2fsecret.txt",
		"/static/%2e%2e%2fsecret.txt",
		"/static/css/../../secret.txt",
		"/static/css/%2e%2e/%2e%2e/secret.txt",
		"/static//etc/passwd",
		"/static//secret.txt",
		"/static/%2fsecret.txt",
		"/static/\\..\\secret.txt",
		"/static/%5c..%5csecret.txt",
		"/static/..%5csecret.txt",
		"/static/a%00b",
		"/static/index.html%00.css",
		"/static/%zz",
		"/static/....//secret.txt",
		"/static/.%2e/secret.txt",
		"/dot/../secret.txt",
		"/dot/%2e%2e/secret.txt",
	}
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		// Control: the raw-path request reaches the handler.
		req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
		req.URL.Opaque = "/static/css/%2e/site.css"
		if resp, err := client.Do(req); err != nil || resp.StatusCode != 200 {
			t.Fatalf("control request: %v %v", resp, err)
		} else {
			resp.Body.Close()
		}
		for _, a := range attacks {
			req, err := http.NewRequest("GET", "http://"+addr+"/", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.URL.Opaque = a // sent exactly as written
			resp, err := client.Do(req)
			if err != nil {
				t.Errorf("%s: %v", a, err)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body := string(b)
			if resp.StatusCode != 400 && resp.StatusCode != 404 {
				t.Errorf("%s: status %d", a, resp.StatusCode)
			}
			if strings.Contains(body, "SECRET") {
				t.Errorf("%s: leaked %q", a, body)
			}
		}
	})
}

func TestNew(t *testing.T) {
	for name, cfg := range map[string]static.Config{
		"nil FS":   {},
		"bad root": {FS: files, Root: "../x"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			static.New(cfg)
		}()
	}
}

// TestHeadOfStreamedFile: a file above 64 KiB is streamed with its exact
// Content-Length (never chunked), and a HEAD for it gets that length without a
// body, on HTTP/1.1 and HTTP/2; a streamed range gets the range's length.
func TestHeadOfStreamedFile(t *testing.T) {
	addr := startStatic(t)
	for _, tc := range []struct{ method, rng, body string }{
		{"GET", "", big}, {"HEAD", "", ""}, {"GET", "bytes=1000-1009", "0123456789"},
	} {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		req := tc.method + " /small/big.txt HTTP/1.1\r\nHost: x\r\n"
		if tc.rng != "" {
			req += "Range: " + tc.rng + "\r\n"
		}
		if _, err := conn.Write([]byte(req + "\r\n")); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: tc.method})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := strconv.Itoa(len(big))
		if tc.rng != "" {
			want = "10"
		}
		if err != nil || len(resp.TransferEncoding) != 0 || resp.Header.Get("Content-Length") != want || string(got) != tc.body {
			t.Errorf("%s %q: %d, Transfer-Encoding %v, Content-Length %q (want %s), body %d bytes, err %v", tc.method, tc.rng,
				resp.StatusCode, resp.TransferEncoding, resp.Header.Get("Content-Length"), want, len(got), err)
		}
	}
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		resp, _ := mwtest.Do(t, client, "HEAD", "http://"+addr+"/small/big.txt", nil, nil)
		if resp.StatusCode != 200 || resp.ContentLength != int64(len(big)) {
			t.Errorf("HEAD over %s: %d, Content-Length %d", resp.Proto, resp.StatusCode, resp.ContentLength)
		}
	})
}
