package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/cmd/demo/democlient"
)

// TestDemoClient: the client oapi-codegen generated from /openapi.json calls
// the running demo's routes, over a socket with net/http, and reads their
// answers.
func TestDemoClient(t *testing.T) {
	base := startDemoHTTP(t)
	c, err := democlient.NewClientWithResponses(base)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check := func(name string, err error, got func() (int, []byte), wantCode int, want string) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		code, body := got()
		if code != wantCode || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %.100q, want %d with %q", name, code, body, wantCode, want)
		}
	}
	bench, err := c.GetBenchWithResponse(ctx)
	check("GetBench", err, func() (int, []byte) { return bench.StatusCode(), bench.Body }, 200, "OK")
	js, err := c.GetJsonWithResponse(ctx)
	check("GetJson", err, func() (int, []byte) { return js.StatusCode(), js.Body }, 200, "Hello")
	if err == nil && (js.JSON200 == nil || js.JSON200.Message != "Hello, World!") {
		t.Errorf("GetJson: JSON200 %+v", js.JSON200)
	}
	post, err := c.GetUsersByIdPostsByPostIdWithResponse(ctx, "ada", "42")
	check("GetUsersByIdPostsByPostId", err, func() (int, []byte) { return post.StatusCode(), post.Body }, 200, "user=ada post=42")
	up, err := c.PostUploadWithBodyWithResponse(ctx, "application/octet-stream", strings.NewReader("hello"))
	check("PostUpload", err, func() (int, []byte) { return up.StatusCode(), up.Body }, 200, "5")
	dl, err := c.GetDownloadWithResponse(ctx, &democlient.GetDownloadParams{Size: 1000})
	check("GetDownload", err, func() (int, []byte) { return dl.StatusCode(), dl.Body }, 200, "")
	if err == nil && len(dl.Body) != 1000 {
		t.Errorf("GetDownload: %d bytes", len(dl.Body))
	}
	bad, err := c.GetDownloadWithResponse(ctx, &democlient.GetDownloadParams{Size: 1 << 30})
	check("GetDownload too big", err, func() (int, []byte) { return bad.StatusCode(), bad.Body }, 400, "size must be")
	slow, err := c.GetSlowWithResponse(ctx, &democlient.GetSlowParams{Ms: 5})
	check("GetSlow", err, func() (int, []byte) { return slow.StatusCode(), slow.Body }, 200, "OK")
	st, err := c.GetStreamWithResponse(ctx, &democlient.GetStreamParams{N: 3})
	check("GetStream", err, func() (int, []byte) { return st.StatusCode(), st.Body }, 200, "abc")
	if err == nil && len(st.Body) != 3*1024 {
		t.Errorf("GetStream: %d bytes", len(st.Body))
	}
	nh, err := c.GetNethttpHelloWithResponse(ctx)
	check("GetNethttpHello", err, func() (int, []byte) { return nh.StatusCode(), nh.Body }, 200, "hello from net/http")
	pn, err := c.GetPanicWithResponse(ctx)
	check("GetPanic", err, func() (int, []byte) { return pn.StatusCode(), pn.Body }, 500, "")
	sse, err := c.GetSseWithResponse(ctx)
	check("GetSse", err, func() (int, []byte) { return sse.StatusCode(), sse.Body }, 200, "data: event 5")
	m, err := c.GetMetricsWithResponse(ctx)
	check("GetMetrics", err, func() (int, []byte) { return m.StatusCode(), m.Body }, 200, "# TYPE")
	root, err := c.GetRootWithResponse(ctx)
	check("GetRoot", err, func() (int, []byte) { return root.StatusCode(), root.Body }, 200, "<html")
	spec, err := c.GetOpenAPIJSONWithResponse(ctx)
	check("GetOpenAPIJSON", err, func() (int, []byte) { return spec.StatusCode(), spec.Body }, 200, `"openapi": "3.1.0"`)
	docs, err := c.GetDocsWithResponse(ctx)
	check("GetDocs", err, func() (int, []byte) { return docs.StatusCode(), docs.Body }, 200, "SwaggerUIBundle")
}
