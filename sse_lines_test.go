package celeris

import (
	"net/http"
	"testing"
)

// TestSSEDataLineBreaks: every line break of Data (CRLF, LF, lone CR; WHATWG HTML
// §9.2.5) starts a new data field, so the client rebuilds the lines.
func TestSSEDataLineBreaks(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{name: "one line", data: "a", want: "data: a\n\n"},
		{name: "LF", data: "a\nb", want: "data: a\ndata: b\n\n"},
		{name: "CRLF", data: "a\r\nb", want: "data: a\ndata: b\n\n"},
		{name: "lone CR", data: "a\rb", want: "data: a\ndata: b\n\n"},
		{name: "CR CR", data: "a\r\rb", want: "data: a\ndata: \ndata: b\n\n"},
		{name: "LF CR", data: "a\n\rb", want: "data: a\ndata: \ndata: b\n\n"},
		{name: "trailing CR", data: "a\r", want: "data: a\ndata: \n\n"},
		{name: "empty", data: "", want: "data: \n\n"},
	}
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/sse/:i", func(c *Context) error {
			i, err := c.ParamInt("i")
			if err != nil {
				return err
			}
			sse, err := c.SSE()
			if err != nil {
				return err
			}
			return sse.Send(Event{Data: tests[i].data})
		})
	})
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		for i, tt := range tests {
			resp, err := cl.Get("http://" + addr + "/sse/" + string(rune('0'+i)))
			if err != nil {
				t.Fatal(err)
			}
			if got := bodyString(t, resp); got != tt.want {
				t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
			}
		}
	})
}
