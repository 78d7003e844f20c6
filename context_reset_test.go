package celeris

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestContextResetClearsEveryFeature: a request that uses every Context feature
// leaves a Context that reset returns to its zero state, field by field (reflection,
// so a field added later is checked too): reset clears the fields after hdrBuf only
// when touched says a feature set them, and this fails if a feature forgets its bit.
func TestContextResetClearsEveryFeature(t *testing.T) {
	var used *Context
	s := New(Config{})
	s.POST("/all/:id", func(c *Context) error {
		used = c
		c.SetPath(c.Path()) // no effect after routing; sets the overrides
		c.SetMethod(c.Method())
		c.SetContext(context.WithValue(context.Background(), struct{}{}, 1))
		_ = c.Context()
		c.Set("k", 1)
		_ = c.Query("q")
		_, _ = c.Body()
		c.SetHeaderBytes("X-B", []byte("v"))
		c.Buffer().WriteString("buffered")
		status, body, ok, err := c.CaptureResponse(func(c *Context) error {
			return c.JSON(201, map[string]int{"a": 1})
		})
		if !ok || err != nil || status != 201 || !bytes.Contains(body, []byte(`"a"`)) {
			t.Errorf("capture: %d %q %v %v", status, body, ok, err)
		}
		_ = c.FormValue("f")
		w, err := c.Stream(200, "text/plain")
		if err != nil {
			return err
		}
		_, _ = w.Write([]byte("streamed"))
		return nil
	}).Inline()
	s.freeze()
	serve, fc := inlineServe(t, s, []byte("POST /all/7?q=1&f=2 HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\nf=3"))
	serve()
	if used == nil || !containsBody(fc.out, "streamed") {
		t.Fatalf("handler did not run: %q", fc.out)
	}
	got := reflect.ValueOf(used).Elem()
	for i := 0; i < got.NumField(); i++ {
		name := got.Type().Field(i).Name
		f := got.Field(i)
		switch {
		case name == "server" || name == "jenc" || name == "hdrBuf":
			// kept for reuse (hdrBuf's used fields are cleared with header, below)
		case name == "jbuf" || name == "ubuf":
			if n := map[string]int{"jbuf": used.jbuf.Len(), "ubuf": used.ubuf.Len()}[name]; n != 0 {
				t.Errorf("after reset %s holds %d bytes", name, n)
			}
		case name == "params":
			if used.params.Len() != 0 {
				t.Errorf("after reset params holds %d", used.params.Len())
			}
		case f.Kind() == reflect.Slice:
			if f.Len() != 0 {
				t.Errorf("after reset %s has %d elements", name, f.Len())
			}
		case !f.IsZero():
			t.Errorf("after reset %s = %v, want its zero value", name, f)
		}
	}
	for i, h := range used.hdrBuf {
		if h.Name != "" || h.Value != "" {
			t.Errorf("after reset hdrBuf[%d] = %q", i, h)
		}
	}
}

// TestNoStateLeaksBetweenRequests: over real connections (every protocol), a
// request that uses every Context feature is followed, many times, by one that
// looks for anything left from it: the recycled Context and exchange must come back
// clean (reset skips what touched says was unused, recycling leaves the clearing to
// the next use).
func TestNoStateLeaksBetweenRequests(t *testing.T) {
	t.Parallel()
	type key struct{}
	_, addr := startServer(t, Config{EventLoops: 1}, func(s *Server) {
		s.POST("/dirty", func(c *Context) error {
			c.SetPath("/elsewhere")
			c.SetMethod("PATCH")
			c.SetContext(context.WithValue(c.Context(), key{}, "dirty"))
			c.Set("k", "dirty")
			_ = c.Query("q")
			_, _ = c.Body()
			c.SetHeaderBytes("X-Dirty", []byte("1"))
			c.Buffer().WriteString("dirty")
			_, _, _, _ = c.CaptureResponse(func(c *Context) error { return c.JSON(202, "dirty") })
			return c.String(200, "dirty")
		}).Inline()
		s.GET("/clean", func(c *Context) error {
			var leaks []string
			if _, ok := c.Get("k"); ok {
				leaks = append(leaks, "value")
			}
			if c.Context().Value(key{}) != nil {
				leaks = append(leaks, "context")
			}
			if c.Method() != "GET" || c.Path() != "/clean" {
				leaks = append(leaks, "override "+c.Method()+" "+c.Path())
			}
			if c.Query("q") != "" || c.RawQuery() != "" {
				leaks = append(leaks, "query")
			}
			if c.ResponseHeader("X-Dirty") != "" {
				leaks = append(leaks, "response header")
			}
			if c.Header("X-From-Dirty") != "" || c.ContentLength() != 0 {
				leaks = append(leaks, "request")
			}
			if b, _ := c.Body(); len(b) != 0 {
				leaks = append(leaks, "body")
			}
			if len(leaks) > 0 {
				return c.String(500, strings.Join(leaks, ","))
			}
			return c.String(200, "clean")
		}).Inline()
	})
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		for i := 0; i < 50; i++ {
			req, _ := http.NewRequest("POST", "http://"+addr+"/dirty?q=1", strings.NewReader("dirty body"))
			req.Header.Set("X-From-Dirty", "1")
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			resp, err = cl.Get("http://" + addr + "/clean")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(body) != "clean" {
				t.Fatalf("%s round %d: %d %q", proto, i, resp.StatusCode, body)
			}
		}
	})
}
