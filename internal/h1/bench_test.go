package h1

import (
	"strings"
	"testing"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

func benchHeaders(n int) string {
	base := []string{
		"User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
		"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
		"Accept-Language: en-US,en;q=0.9",
		"Accept-Encoding: gzip, deflate, br",
		"Cookie: session=0123456789abcdef; theme=dark",
		"Referer: https://example.com/dashboard",
		"Connection: keep-alive",
		"Cache-Control: no-cache",
		"X-Request-Id: 7f3c9a1e-2b4d-4e8f-9a0b-1c2d3e4f5a6b",
	}
	var b strings.Builder
	b.WriteString("Host: www.example.com\r\n")
	for i := 1; i < n; i++ {
		if i-1 < len(base) {
			b.WriteString(base[i-1])
		} else {
			b.WriteString("X-Custom-Header-" + strings.Repeat("x", i%7) + ": some-value-" + strings.Repeat("v", i%11))
		}
		b.WriteString("\r\n")
	}
	return b.String()
}

func BenchmarkParseRequest(b *testing.B) {
	cases := []struct {
		name string
		in   string
	}{
		{name: "simple", in: "GET / HTTP/1.1\r\nHost: www.example.com\r\n\r\n"},
		{name: "headers10", in: "GET /api/v1/users/12345?fields=name,email HTTP/1.1\r\n" + benchHeaders(10) + "\r\n"},
		{name: "headers32", in: "GET /api/v1/users/12345?fields=name,email HTTP/1.1\r\n" + benchHeaders(32) + "\r\n"},
		{name: "post", in: "POST /api/v1/users HTTP/1.1\r\nHost: www.example.com\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			buf := []byte(c.in)
			var r Request
			b.ReportAllocs()
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				if _, err := ParseHead(buf, &r, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkWriteResponse(b *testing.B) {
	json := []byte(`{"message":"Hello, World!"}`)
	html := []byte("<!DOCTYPE html><html><head><title>Celeris</title></head><body>" + strings.Repeat("<p>hello</p>", 80) + "</body></html>")
	cases := []struct {
		name   string
		status int
		header []httpmsg.Field
		body   []byte
	}{
		{name: "json", status: 200, header: []httpmsg.Field{{Name: "Content-Type", Value: "application/json"}}, body: json},
		{name: "html", status: 200, header: []httpmsg.Field{
			{Name: "Content-Type", Value: "text/html; charset=utf-8"},
			{Name: "Cache-Control", Value: "no-store"},
			{Name: "X-Frame-Options", Value: "DENY"},
		}, body: html},
		{name: "status", status: 204},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			dst := make([]byte, 0, 4096)
			b.ReportAllocs()
			n := len(AppendHead(nil, c.status, c.header, int64(len(c.body)), false, false)) + len(c.body)
			b.SetBytes(int64(n))
			for b.Loop() {
				out := AppendHead(dst[:0], c.status, c.header, int64(len(c.body)), false, false)
				dst = append(out, c.body...)
			}
		})
	}
}

func BenchmarkChunkedDecode(b *testing.B) {
	in := []byte(strings.Repeat("400\r\n"+strings.Repeat("x", 1024)+"\r\n", 16) + "0\r\n\r\n")
	dst := make([]byte, 0, 32<<10)
	var d ChunkedDecoder
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		d.Reset()
		if _, _, done, err := d.Decode(in, dst[:0], 0); !done || err != nil {
			b.Fatal(done, err)
		}
	}
}
