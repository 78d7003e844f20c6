package h1

import (
	"testing"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// RFC 9110 §6.5.1: framing, routing, authentication and content-format fields
// are not trailers; the last chunk leaves them out.
func TestAppendLastChunkDropsForbiddenTrailers(t *testing.T) {
	got := string(AppendLastChunk(nil, []httpmsg.Field{
		{Name: "X-Sum", Value: "1"}, {Name: "content-length", Value: "9"}, {Name: "Transfer-Encoding", Value: "x"},
		{Name: "Host", Value: "h"}, {Name: "Authorization", Value: "a"}, {Name: "Set-Cookie", Value: "c=1"},
		{Name: "Content-Type", Value: "t"}, {Name: "Cache-Control", Value: "no"}, {Name: "Trailer", Value: "X"},
		{Name: "If-Match", Value: "e"}, {Name: "Grpc-Status", Value: "0"}, {Name: "X-Bad", Value: "a\r\nb"},
	}))
	if want := "0\r\nX-Sum: 1\r\nGrpc-Status: 0\r\n\r\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestAppendInformational(t *testing.T) {
	got := string(AppendInformational(nil, 103, []httpmsg.Field{
		{Name: "Link", Value: "</a.css>; rel=preload"}, {Name: "Connection", Value: "close"},
		{Name: "Content-Length", Value: "3"}, {Name: "X-Bad", Value: "a\nb"},
	}))
	if want := "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
