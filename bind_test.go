package celeris

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

type level int

func (l *level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return errors.New("unknown level")
	}
	return nil
}

type Paging struct {
	Page int `query:"page" default:"1"`
	Size int `query:"size" default:"10"`
}

type searchReq struct {
	Paging
	ID      int64         `param:"id"`
	Name    string        `param:"name"`
	Q       string        `query:"q"`
	Tags    []string      `query:"tag"`
	Ratio   float64       `query:"ratio"`
	Debug   bool          `query:"debug"`
	Since   time.Time     `query:"since"`
	Wait    time.Duration `query:"wait" default:"1s"`
	Limit   *int          `query:"limit"`
	Level   level         `query:"level"`
	Token   string        `header:"X-Token"`
	Title   string        `json:"title" form:"title"`
	Count   uint8         `json:"count" form:"count"`
	Ignored string
}

type fieldErr struct{ field, msg string }

func (e fieldErr) Field() string { return e.field }
func (e fieldErr) Error() string { return e.field + " " + e.msg }

type fieldErrs []fieldErr

func (e fieldErrs) Error() string { return fmt.Sprint([]fieldErr(e)) }

// titleRequired is a hand-written Validator shaped like go-playground's (a slice
// of errors with Field()).
type titleRequired struct{}

func (titleRequired) Validate(v any) error {
	if r, ok := v.(*searchReq); ok && r.Title == "" {
		return fieldErrs{{"Title", "is required"}}
	}
	return nil
}

func TestBind(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{Validator: titleRequired{}}, func(s *Server) {
		s.Any("/items/:id/:name", func(c *Context) error {
			var r searchReq
			if err := c.Bind(&r); err != nil {
				return err
			}
			lim := -1
			if r.Limit != nil {
				lim = *r.Limit
			}
			return c.String(200, fmt.Sprintf("id=%d name=%q page=%d size=%d q=%s tags=%v ratio=%v debug=%v since=%s wait=%s limit=%d level=%d token=%s title=%s count=%d",
				r.ID, r.Name, r.Page, r.Size, r.Q, r.Tags, r.Ratio, r.Debug, r.Since.UTC().Format(time.RFC3339), r.Wait, lim, r.Level, r.Token, r.Title, r.Count))
		})
	})
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		base := "http://" + addr + "/items/42/a%20b"
		q := "?page=3&q=x&tag=a&tag=b&ratio=0.5&debug=true&since=2024-01-02T03:04:05Z&limit=7&level=high"
		do := func(method, url, ct string, body io.Reader) (int, string) {
			req, _ := http.NewRequest(method, url, body)
			req.Header.Set("X-Token", "tok")
			if ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, bodyString(t, resp)
		}
		want := `id=42 name="a b" page=3 size=10 q=x tags=[a b] ratio=0.5 debug=true since=2024-01-02T03:04:05Z wait=1s limit=7 level=2 token=tok title=T count=9`
		if code, body := do("POST", base+q, "application/json", strings.NewReader(`{"title":"T","count":9}`)); code != 200 || body != want {
			t.Errorf("json: %d %s\nwant %s", code, body, want)
		}
		if code, body := do("POST", base+q, "application/x-www-form-urlencoded", strings.NewReader(url.Values{"title": {"T"}, "count": {"9"}}.Encode())); code != 200 || body != want {
			t.Errorf("urlencoded: %d %s", code, body)
		}
		var mb bytes.Buffer
		mw := multipart.NewWriter(&mb)
		_ = mw.WriteField("title", "T")
		_ = mw.WriteField("count", "9")
		mw.Close()
		if code, body := do("POST", base+q, mw.FormDataContentType(), &mb); code != 200 || body != want {
			t.Errorf("multipart: %d %s", code, body)
		}
		// Every failing field is listed, conversion errors first.
		code, body := do("POST", base+"?page=x&ratio=y&level=mid", "application/json", strings.NewReader(`{"title":"T","count":300}`))
		for _, w := range []string{"count (json)", "page (query)", "ratio (query)", "level (query)"} {
			if code != 400 || !strings.Contains(body, w) {
				t.Errorf("bad json field: %d %q lacks %q", code, body, w)
			}
		}
		if code, body := do("POST", base, "application/json", strings.NewReader(`{"title":`)); code != 400 || !strings.Contains(body, "malformed JSON") {
			t.Errorf("malformed json: %d %q", code, body)
		}
		code, body = do("GET", "http://"+addr+"/items/x/n?page=x&ratio=y&level=mid&since=yesterday&wait=forever", "", nil)
		for _, w := range []string{"id (param)", "page (query)", "ratio (query)", "level (query)", "since (query)", "wait (query)"} {
			if code != 400 || !strings.Contains(body, w) {
				t.Errorf("conversion errors: %d %q lacks %q", code, body, w)
			}
		}
		code, body = do("GET", base, "", nil)
		if code != 400 || !strings.Contains(body, "Title is required") {
			t.Errorf("validator: %d %q", code, body)
		}
	})
}

func TestBindErrorType(t *testing.T) {
	t.Parallel()
	errc := make(chan error, 1)
	_, addr := startServer(t, Config{ErrorHandler: func(c *Context, err error) {
		errc <- err
		DefaultErrorHandler(c, err)
	}}, func(s *Server) {
		s.GET("/", func(c *Context) error {
			var p Paging
			return c.BindQuery(&p)
		})
	})
	if code, _ := rawGet(t, addr, "/?page=1x&size=2y"); code != 400 {
		t.Fatalf("status %d", code)
	}
	got := <-errc
	var be *BindError
	if !errors.As(got, &be) || len(be.Fields) != 2 || be.Fields[0].Field != "page" || be.Fields[1].Source != "query" {
		t.Fatalf("error %#v", got)
	}
}

func TestTypedGetters(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/n/:id", func(c *Context) error {
			id, err := c.ParamInt("id")
			if err != nil {
				return err
			}
			got := fmt.Sprintln(id, c.QueryInt("a", -1), c.QueryInt64("b", -2), c.QueryFloat("f", 0.5), c.QueryBool("d", false), c.QueryBool("e", true), c.QueryDefault("s", "def"))
			return c.String(200, strings.TrimSpace(got))
		})
	})
	tests := []struct{ path, want string }{
		{"/n/5?a=3&b=4&f=1.5&d&e=0&s=x", "5 3 4 1.5 true false x"},
		{"/n/5?a=z&b=&f=q&d=maybe", "5 -1 -2 0.5 false true def"},
	}
	for _, tt := range tests {
		if code, body := rawGet(t, addr, tt.path); code != 200 || body != tt.want {
			t.Errorf("%s: %d %q, want %q", tt.path, code, body, tt.want)
		}
	}
	if code, body := rawGet(t, addr, "/n/x"); code != 400 || !strings.Contains(body, "id") {
		t.Errorf("ParamInt: %d %q", code, body)
	}
}

func TestBindPlanCached(t *testing.T) {
	p1 := planFor(typeOf[searchReq]())
	p2 := planFor(typeOf[searchReq]())
	if p1 != p2 {
		t.Fatal("plan built twice")
	}
	if len(p1.fields) != 15 { // Page and Size from the embedded Paging; Ignored skipped
		t.Fatalf("%d fields", len(p1.fields))
	}
}

func TestBindBadTypePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	planFor(typeOf[struct {
		C chan int `query:"c"`
	}]())
}
