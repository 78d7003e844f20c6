package celeris

import (
	"bytes"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func TestFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	small := []byte("0123456789")
	large := bytes.Repeat([]byte("abcdefghijklmnopqrstuvwxyz"), 20000) // 520 000 bytes
	for name, b := range map[string][]byte{"small.txt": small, "large.bin": large, "naïve.txt": small} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/f/:name", func(c *Context) error { return c.File(filepath.Join(dir, c.Param("name"))) })
		s.GET("/captured/:name", func(c *Context) error {
			// Under capture middleware (compress, etag) a large file still streams
			// with its length: only complete responses are captured.
			_, _, _, err := c.CaptureResponse(func(c *Context) error { return c.File(filepath.Join(dir, c.Param("name"))) })
			return err
		})
		s.GET("/dl/:name", func(c *Context) error {
			return c.Attachment(filepath.Join(dir, c.Param("name")), "")
		})
	})
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		get := func(method, path string, h ...string) *http.Response {
			t.Helper()
			req, _ := http.NewRequest(method, "http://"+addr+path, nil)
			for i := 0; i+1 < len(h); i += 2 {
				req.Header.Set(h[i], h[i+1])
			}
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}
		for _, tc := range []struct {
			name string
			data []byte
		}{{"small.txt", small}, {"large.bin", large}} {
			resp := get("GET", "/f/"+tc.name)
			body := bodyString(t, resp)
			if resp.StatusCode != 200 || body != string(tc.data) {
				t.Fatalf("%s: %d, %d bytes", tc.name, resp.StatusCode, len(body))
			}
			// A known length is never sent chunked.
			if resp.ContentLength != int64(len(tc.data)) || len(resp.TransferEncoding) != 0 {
				t.Errorf("%s: Content-Length %d, Transfer-Encoding %v", tc.name, resp.ContentLength, resp.TransferEncoding)
			}
			tag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
			if tag == "" || lm == "" || resp.Header.Get("Accept-Ranges") != "bytes" {
				t.Fatalf("%s: header %v", tc.name, resp.Header)
			}
			if r := get("GET", "/f/"+tc.name, "If-None-Match", tag); r.StatusCode != 304 {
				t.Errorf("If-None-Match: %d", r.StatusCode)
			} else {
				r.Body.Close()
			}
			if r := get("GET", "/f/"+tc.name, "If-Modified-Since", lm); r.StatusCode != 304 {
				t.Errorf("If-Modified-Since: %d", r.StatusCode)
			} else {
				r.Body.Close()
			}
			if r := get("GET", "/f/"+tc.name, "If-Match", `"other"`); r.StatusCode != 412 {
				t.Errorf("If-Match: %d", r.StatusCode)
			} else {
				r.Body.Close()
			}
			r := get("HEAD", "/f/"+tc.name)
			if b := bodyString(t, r); r.StatusCode != 200 || b != "" || r.ContentLength != int64(len(tc.data)) {
				t.Errorf("HEAD: %d, length %d, body %d bytes", r.StatusCode, r.ContentLength, len(b))
			}
			size := len(tc.data)
			r = get("GET", "/f/"+tc.name, "Range", "bytes=2-4")
			if b := bodyString(t, r); r.StatusCode != 206 || b != string(tc.data[2:5]) ||
				r.Header.Get("Content-Range") != "bytes 2-4/"+strconv.Itoa(size) || r.ContentLength != 3 {
				t.Errorf("range: %d %q %v", r.StatusCode, b, r.Header)
			}
			r = get("GET", "/f/"+tc.name, "Range", "bytes=-3")
			if b := bodyString(t, r); r.StatusCode != 206 || b != string(tc.data[size-3:]) {
				t.Errorf("suffix range: %d %q", r.StatusCode, b)
			}
			r = get("GET", "/f/"+tc.name, "Range", "bytes="+strconv.Itoa(size)+"-")
			if bodyString(t, r); r.StatusCode != 416 || r.Header.Get("Content-Range") != "bytes */"+strconv.Itoa(size) {
				t.Errorf("416: %d %v", r.StatusCode, r.Header)
			}
			r = get("GET", "/f/"+tc.name, "Range", "bytes=0-0", "If-Range", `"stale"`)
			if b := bodyString(t, r); r.StatusCode != 200 || len(b) != size {
				t.Errorf("stale If-Range: %d", r.StatusCode)
			}
			// Several ranges: multipart/byteranges with an exact length.
			r = get("GET", "/f/"+tc.name, "Range", "bytes=0-1, 5-6")
			mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			raw := bodyString(t, r)
			if r.StatusCode != 206 || mt != "multipart/byteranges" || r.ContentLength != int64(len(raw)) {
				t.Fatalf("multi range: %d %s length %d of %d", r.StatusCode, mt, r.ContentLength, len(raw))
			}
			mr := multipart.NewReader(strings.NewReader(raw), params["boundary"])
			var parts []string
			for {
				p, err := mr.NextPart()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(p)
				parts = append(parts, p.Header.Get("Content-Range")+"="+string(b))
			}
			if want := []string{"bytes 0-1/" + strconv.Itoa(size) + "=" + string(tc.data[:2]), "bytes 5-6/" + strconv.Itoa(size) + "=" + string(tc.data[5:7])}; strings.Join(parts, "|") != strings.Join(want, "|") {
				t.Errorf("parts %q, want %q", parts, want)
			}
		}
		if r := get("GET", "/captured/large.bin"); r.ContentLength != int64(len(large)) || bodyString(t, r) != string(large) {
			t.Errorf("large file under capture: length %d", r.ContentLength)
		}
		if r := get("GET", "/f/missing"); r.StatusCode != 404 {
			t.Errorf("missing: %d", r.StatusCode)
		} else {
			r.Body.Close()
		}
		r := get("GET", "/dl/na%C3%AFve.txt")
		bodyString(t, r)
		if cd := r.Header.Get("Content-Disposition"); cd != `attachment; filename="na_ve.txt"; filename*=UTF-8''na%C3%AFve.txt` {
			t.Errorf("Content-Disposition %q", cd)
		}
	})
}

func TestStreamLengthShortBody(t *testing.T) {
	t.Parallel()
	short := func(c *Context) error {
		w, err := c.StreamLength(200, "text/plain", 100)
		if err != nil {
			return err
		}
		_, _ = w.Write([]byte("only half"))
		_ = w.Flush()
		return nil
	}
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/short", short)
		s.GET("/short-inline", short).Inline()
		s.GET("/exact-inline", func(c *Context) error {
			w, err := c.StreamLength(200, "text/plain", 5)
			if err != nil {
				return err
			}
			_, err = w.Write([]byte("12345"))
			return err
		}).Inline()
		s.GET("/long", func(c *Context) error {
			w, err := c.StreamLength(200, "text/plain", 4)
			if err != nil {
				return err
			}
			if n, err := w.Write([]byte("123456")); n != 4 || err == nil {
				t.Errorf("Write past the length: %d, %v", n, err)
			}
			return nil
		})
	})
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		for _, path := range []string{"/short", "/short-inline"} {
			resp, err := cl.Get("http://" + addr + path)
			if err != nil {
				t.Fatal(err)
			}
			if resp.ContentLength != 100 {
				t.Errorf("%s: length %d", path, resp.ContentLength)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil {
				t.Errorf("%s: a short body read as complete: %q", path, b)
			}
		}
		resp, err := cl.Get("http://" + addr + "/exact-inline")
		if err != nil {
			t.Fatal(err)
		}
		if b := bodyString(t, resp); b != "12345" || resp.ContentLength != 5 {
			t.Errorf("exact inline: %q, length %d", b, resp.ContentLength)
		}
		resp, err = cl.Get("http://" + addr + "/long")
		if err != nil {
			t.Fatal(err)
		}
		if b := bodyString(t, resp); b != "1234" {
			t.Errorf("long: %q", b)
		}
	})
	// HTTP/1.1: the connection closes after the short body instead of carrying on.
	r := dialRaw(t, addr)
	r.send("GET /short HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(r.br)
	if !bytes.Contains(b, []byte("Content-Length: 100\r\n")) || !bytes.HasSuffix(b, []byte("only half")) {
		t.Errorf("raw: %q", b)
	}
}

func TestContentDisposition(t *testing.T) {
	tests := []struct{ kind, name, want string }{
		{"attachment", "report.pdf", `attachment; filename="report.pdf"`},
		{"inline", `a "b".txt`, `inline; filename="a \"b\".txt"`},
		{"attachment", "résumé.pdf", `attachment; filename="r_sum_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`},
		{"attachment", "日本.txt", `attachment; filename="__.txt"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.txt`},
		{"attachment", "a b;c.txt", `attachment; filename="a b;c.txt"`},
	}
	for _, tt := range tests {
		if got := ContentDisposition(tt.kind, tt.name); got != tt.want {
			t.Errorf("ContentDisposition(%q, %q) = %q, want %q", tt.kind, tt.name, got, tt.want)
		}
	}
}

func TestParseRanges(t *testing.T) {
	tests := []struct {
		v    string
		size int64
		want []byteRange
		res  rangeResult
	}{
		{"bytes=0-4", 10, []byteRange{{Start: 0, End: 5}}, rangeOK},
		{"bytes=5-", 10, []byteRange{{Start: 5, End: 10}}, rangeOK},
		{"bytes=-3", 10, []byteRange{{Start: 7, End: 10}}, rangeOK},
		{"bytes=0-1,4-5", 10, []byteRange{{Start: 0, End: 2}, {Start: 4, End: 6}}, rangeOK},
		{"bytes=20-30, 0-0", 10, []byteRange{{Start: 0, End: 1}}, rangeOK},
		{"bytes=10-", 10, nil, rangeUnsatisfiable},
		{"bytes=-0", 10, nil, rangeUnsatisfiable},
		{"bytes=0-9,0-9", 10, nil, rangeIgnore}, // more than the file
		{"bytes=5-2", 10, nil, rangeIgnore},
		{"bytes=x-1", 10, nil, rangeIgnore},
		{"items=0-1", 10, nil, rangeIgnore},
		{"bytes=" + strings.Repeat("0-0,", 33), 10, nil, rangeIgnore},
	}
	for _, tt := range tests {
		got, res := parseRanges(tt.v, tt.size)
		if res != tt.res || len(got) != len(tt.want) {
			t.Errorf("parseRanges(%q) = %v, %v", tt.v, got, res)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("parseRanges(%q) = %v", tt.v, got)
			}
		}
	}
}

func TestFileFS(t *testing.T) {
	t.Parallel()
	mod := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	fsys := fstest.MapFS{"docs/a.txt": {Data: []byte("from fs"), ModTime: mod}, "docs/sub": {Mode: fs.ModeDir}}
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/fs/*name", func(c *Context) error { return c.FileFS(fsys, "docs/"+c.Param("name")) })
	})
	r := dialRaw(t, addr)
	r.send("GET /fs/a.txt HTTP/1.1\r\nHost: x\r\n\r\n")
	resp := r.readResponse("GET")
	if b := bodyString(t, resp); resp.StatusCode != 200 || b != "from fs" || resp.Header.Get("Last-Modified") != "Tue, 02 Jan 2024 03:04:05 GMT" ||
		resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("%d %q %v", resp.StatusCode, b, resp.Header)
	}
	for path, want := range map[string]int{"/fs/sub": 404, "/fs/none.txt": 404} {
		if code, _ := rawGet(t, addr, path); code != want {
			t.Errorf("%s: %d, want %d", path, code, want)
		}
	}
}
