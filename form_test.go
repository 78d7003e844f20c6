package celeris

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func formRoutes(s *Server) {
	s.POST("/form", func(c *Context) error {
		v, err := c.PostForm()
		if err != nil {
			return err
		}
		// Cached: a second call returns the same values.
		v2, err := c.PostForm()
		if err != nil || fmt.Sprint(v2) != fmt.Sprint(v) {
			return errors.New("PostForm not cached")
		}
		return c.String(200, fmt.Sprintf("name=%s tags=%v value=%s q=%s",
			v.Get("name"), v["tag"], c.FormValue("name"), c.FormValue("q")))
	})
	s.POST("/upload", func(c *Context) error {
		fh, err := c.FormFile("file")
		if err != nil {
			return err
		}
		f, err := fh.Open()
		if err != nil {
			return err
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			return err
		}
		form, err := c.MultipartForm(1 << 20)
		if err != nil {
			return err
		}
		return c.String(200, fmt.Sprintf("%s %d %s title=%s/%s n=%d",
			fh.Filename, fh.Size, b, c.FormValue("title"), form.Value["title"][0], len(form.File["file"])))
	})
	s.GET("/search", func(c *Context) error {
		v, err := c.PostForm()
		if err != nil {
			return err
		}
		return c.String(200, fmt.Sprintf("%d %s", len(v), c.FormValue("q")))
	})
}

func multipartBody(t testing.TB, fields map[string]string, fileField, fileName, content string) (string, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if fileField != "" {
		fw, err := mw.CreateFormFile(fileField, fileName)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(fw, content)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), &buf
}

func TestFormsOverSocket(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, formRoutes)
	client := adaptClient(t)
	base := "http://" + addr

	post := func(path, ct string, body io.Reader) (int, string) {
		t.Helper()
		resp, err := client.Post(base+path, ct, body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, bodyString(t, resp)
	}

	form := url.Values{"name": {"Ana María"}, "tag": {"a", "b"}}
	code, body := post("/form?name=fromquery&q=query", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if want := "name=Ana María tags=[a b] value=Ana María q=query"; code != 200 || body != want {
		t.Errorf("urlencoded: %d %q, want %q", code, body, want)
	}
	code, body = post("/form", "application/x-www-form-urlencoded; charset=utf-8", strings.NewReader("name=%zz"))
	if code != 400 || !strings.Contains(body, "malformed form body") {
		t.Errorf("malformed: %d %q", code, body)
	}
	code, body = post("/form", "text/plain", strings.NewReader("name=x"))
	if code != 415 {
		t.Errorf("wrong type: %d %q", code, body)
	}
	code, body = post("/form", "", strings.NewReader("name=x"))
	if code != 415 {
		t.Errorf("no type with a body: %d %q", code, body)
	}

	ct, mp := multipartBody(t, map[string]string{"title": "report"}, "file", "notes.txt", "file content")
	code, body = post("/upload", ct, mp)
	if want := "notes.txt 12 file content title=report/report n=1"; code != 200 || body != want {
		t.Errorf("multipart: %d %q, want %q", code, body, want)
	}
	// multipart values through PostForm / FormValue.
	ct, mp = multipartBody(t, map[string]string{"name": "multi", "tag": "x"}, "", "", "")
	code, body = post("/form?q=qq", ct, mp)
	if want := "name=multi tags=[x] value=multi q=qq"; code != 200 || body != want {
		t.Errorf("multipart form: %d %q, want %q", code, body, want)
	}
	ct, mp = multipartBody(t, map[string]string{"title": "no file"}, "", "", "")
	code, body = post("/upload", ct, mp)
	if code != 400 || !strings.Contains(body, `missing form file "file"`) {
		t.Errorf("missing file: %d %q", code, body)
	}
	code, body = post("/upload", "multipart/form-data", strings.NewReader("x"))
	if code != 400 || !strings.Contains(body, "boundary") {
		t.Errorf("no boundary: %d %q", code, body)
	}
	code, body = post("/upload", "multipart/form-data; boundary=xyz", strings.NewReader("--xyz\r\ngarbage"))
	if code != 400 || !strings.Contains(body, "malformed multipart form") {
		t.Errorf("malformed multipart: %d %q", code, body)
	}
	code, body = post("/upload", "application/x-www-form-urlencoded", strings.NewReader("file=x"))
	if code != 415 {
		t.Errorf("FormFile on urlencoded: %d %q", code, body)
	}

	resp, err := client.Get(base + "/search?q=go")
	if err != nil {
		t.Fatal(err)
	}
	if body := bodyString(t, resp); resp.StatusCode != 200 || body != "0 go" {
		t.Errorf("GET form: %d %q", resp.StatusCode, body)
	}
}

// Through ServeHTTP the body streams; limits apply to multipart bodies too.
func TestFormsStreamedBody(t *testing.T) {
	s := New(Config{MaxRequestBodySize: 1 << 10})
	formRoutes(s)
	ct, mp := multipartBody(t, map[string]string{"title": "t"}, "file", "f.bin", "small")
	req := httptest.NewRequest("POST", "/upload", io.MultiReader(mp)) // unknown length
	req.ContentLength = -1
	req.Header.Set("Content-Type", ct)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if want := "f.bin 5 small title=t/t n=1"; rec.Code != 200 || rec.Body.String() != want {
		t.Errorf("streamed multipart: %d %q", rec.Code, rec.Body.String())
	}
	ct, mp = multipartBody(t, nil, "file", "big.bin", strings.Repeat("x", 2<<10))
	req = httptest.NewRequest("POST", "/upload", io.MultiReader(mp))
	req.ContentLength = -1
	req.Header.Set("Content-Type", ct)
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("too large: %d %q", rec.Code, rec.Body.String())
	}
}
