package celeris

import (
	"net/http"
	"testing"
)

func TestClientIPAndScheme(t *testing.T) {
	t.Parallel()
	handler := func(c *Context) error { return c.String(200, c.ClientIP()+" "+c.Scheme()) }
	_, trusting := startServer(t, Config{TrustedProxies: MustParsePrefixes("127.0.0.0/8", "10.0.0.0/8", "2001:db8::1")}, func(s *Server) {
		s.GET("/", handler)
	})
	_, plain := startServer(t, Config{}, func(s *Server) { s.GET("/", handler) })
	_, other := startServer(t, Config{TrustedProxies: MustParsePrefixes("10.0.0.0/8")}, func(s *Server) { s.GET("/", handler) })
	tests := []struct {
		name   string
		addr   string
		header []string
		want   string
	}{
		{"no headers", trusting, nil, "127.0.0.1 http"},
		{"xff one hop", trusting, []string{"X-Forwarded-For", "203.0.113.7"}, "203.0.113.7 http"},
		{"xff right to left skipping trusted", trusting, []string{"X-Forwarded-For", "198.51.100.1, 203.0.113.7, 10.1.2.3"}, "203.0.113.7 http"},
		{"xff spoofed left part ignored", trusting, []string{"X-Forwarded-For", "1.1.1.1, 203.0.113.7"}, "203.0.113.7 http"},
		{"xff several lines", trusting, []string{"X-Forwarded-For", "203.0.113.7", "X-Forwarded-For", "10.0.0.1"}, "203.0.113.7 http"},
		{"xff all trusted", trusting, []string{"X-Forwarded-For", "10.0.0.2, 10.0.0.1"}, "10.0.0.2 http"},
		{"xff garbage", trusting, []string{"X-Forwarded-For", "203.0.113.7, nonsense"}, "nonsense http"},
		{"proto", trusting, []string{"X-Forwarded-Proto", "https"}, "127.0.0.1 https"},
		{"proto unknown", trusting, []string{"X-Forwarded-Proto", "gopher"}, "127.0.0.1 http"},
		{"forwarded", trusting, []string{"Forwarded", `for=192.0.2.60;proto=https;by=203.0.113.43`}, "192.0.2.60 https"},
		{"forwarded v6 and chain", trusting, []string{"Forwarded", `for="[2001:db8:cafe::17]:4711", for=10.0.0.9;proto=http`}, "2001:db8:cafe::17 http"},
		{"forwarded wins over xff", trusting, []string{"Forwarded", "for=192.0.2.60", "X-Forwarded-For", "203.0.113.7"}, "192.0.2.60 http"},
		{"forwarded unknown", trusting, []string{"Forwarded", "for=unknown"}, "unknown http"},
		{"untrusted peer", plain, []string{"X-Forwarded-For", "203.0.113.7", "X-Forwarded-Proto", "https", "Forwarded", "for=192.0.2.60;proto=https"}, "127.0.0.1 http"},
		{"peer not in trusted nets", other, []string{"X-Forwarded-For", "203.0.113.7", "X-Forwarded-Proto", "https"}, "127.0.0.1 http"},
	}
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		for _, tt := range tests {
			req, _ := http.NewRequest("GET", "http://"+tt.addr+"/", nil)
			for i := 0; i+1 < len(tt.header); i += 2 {
				req.Header.Add(tt.header[i], tt.header[i+1])
			}
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := bodyString(t, resp); got != tt.want {
				t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
			}
		}
	})
}

func TestMustParsePrefixes(t *testing.T) {
	ps := MustParsePrefixes("10.1.2.3/8", "::1", "192.0.2.1")
	if ps[0].String() != "10.0.0.0/8" || ps[1].String() != "::1/128" || ps[2].String() != "192.0.2.1/32" {
		t.Fatal(ps)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	MustParsePrefixes("nope")
}
