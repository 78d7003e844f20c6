package requestid_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/requestid"
)

// echoID answers with the id the handler sees.
func echoID(c *celeris.Context) error {
	v, _ := c.Get("request_id")
	s, _ := v.(string)
	return c.String(200, s+"|"+requestid.Get(c))
}

func TestRequestID(t *testing.T) {
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(requestid.Default())
		s.GET("/", echoID)
		g := s.Group("/custom", requestid.New(requestid.Config{
			Header:     "X-Trace",
			ContextKey: "trace",
			Generator:  func() string { return "gen" },
		}))
		g.GET("/", func(c *celeris.Context) error {
			v, _ := c.Get("trace")
			return c.String(200, v.(string))
		})
		s.GET("/ignore", echoID, requestid.New(requestid.Config{IgnoreIncoming: true}))
	})
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		url := "http://" + addr
		seen := map[string]bool{}
		for range 3 {
			resp, body := mwtest.Get(t, client, url+"/", nil)
			id := resp.Header.Get("X-Request-ID")
			if !requestid.Valid(id) || !strings.Contains(id, "-") || body != id+"|"+id {
				t.Fatalf("generated id %q, body %q", id, body)
			}
			if seen[id] {
				t.Fatalf("id %q repeated", id)
			}
			seen[id] = true
		}

		valid := []string{"abc", "550e8400-e29b-41d4-a716-446655440000", "YWJj+/==", "a:b.c_d", strings.Repeat("x", 128)}
		for _, in := range valid {
			resp, body := mwtest.Get(t, client, url+"/", mwtest.H("X-Request-ID", in))
			if got := resp.Header.Get("X-Request-ID"); got != in || body != in+"|"+in {
				t.Errorf("incoming %q: header %q body %q", in, got, body)
			}
		}
		invalid := []string{strings.Repeat("x", 129), "a b", "a\"b", "<script>", "a,b", "é"}
		for _, in := range invalid {
			resp, _ := mwtest.Get(t, client, url+"/", mwtest.H("X-Request-ID", in))
			if got := resp.Header.Get("X-Request-ID"); got == in || !requestid.Valid(got) {
				t.Errorf("incoming %q: kept or invalid replacement %q", in, got)
			}
		}

		resp, body := mwtest.Get(t, client, url+"/custom/", mwtest.H("X-Trace", "bad id"))
		if resp.Header.Get("X-Trace") != "gen" || body != "gen" {
			t.Errorf("custom: header %q body %q", resp.Header.Get("X-Trace"), body)
		}
		resp, _ = mwtest.Get(t, client, url+"/custom/", mwtest.H("X-Trace", "mine"))
		if resp.Header.Get("X-Trace") != "mine" {
			t.Errorf("custom: incoming not kept: %q", resp.Header.Get("X-Trace"))
		}

		resp, _ = mwtest.Get(t, client, url+"/ignore", mwtest.H("X-Request-ID", "client"))
		if got := resp.Header.Get("X-Request-ID"); got == "client" || got == "" {
			t.Errorf("IgnoreIncoming: header %q", got)
		}
	})
}

func TestValid(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{id: "", want: false},
		{id: "a", want: true},
		{id: "A-Z_a.z:0+9/=", want: true},
		{id: strings.Repeat("7", requestid.MaxLength), want: true},
		{id: strings.Repeat("7", requestid.MaxLength+1), want: false},
		{id: "a\r\nX-Evil: 1", want: false},
		{id: "a\x00", want: false},
		{id: "a;b", want: false},
	}
	for _, tt := range tests {
		if got := requestid.Valid(tt.id); got != tt.want {
			t.Errorf("Valid(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}

func TestGenerateUnique(t *testing.T) {
	const goroutines, each = 8, 1000
	var mu sync.Mutex
	seen := make(map[string]bool, goroutines*each)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			ids := make([]string, each)
			for i := range ids {
				ids[i] = requestid.Generate()
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range ids {
				if seen[id] || !requestid.Valid(id) {
					t.Errorf("id %q repeated or invalid", id)
				}
				seen[id] = true
			}
		})
	}
	wg.Wait()
}

// TestStoredIDIsStable: a generated id stored under ContextKey is a string of
// its own: keeping it past the handler sees it unchanged (a generated id formatted
// into the pooled Context's buffer would change with the next request).
func TestStoredIDIsStable(t *testing.T) {
	s := celeris.New(celeris.Config{})
	s.Use(requestid.Default())
	var kept []string
	s.GET("/", func(c *celeris.Context) error {
		kept = append(kept, requestid.Get(c))
		return c.String(200, "ok")
	})
	var copies []string
	for range 3 {
		celeristest.Do(s, celeristest.NewRequest("GET", "/", nil))
		copies = append(copies, strings.Clone(kept[len(kept)-1]))
	}
	for i := range kept {
		if kept[i] != copies[i] || (i > 0 && kept[i] == kept[i-1]) {
			t.Fatalf("kept ids %q, copies taken at the time %q", kept, copies)
		}
	}
}

// TestRefusalHeader: the header for refused requests carries a fresh, valid id.
func TestRefusalHeader(t *testing.T) {
	// The map key is DefaultHeader as spelled, the way the middleware writes it.
	a, b := requestid.RefusalHeader(400)[requestid.DefaultHeader], requestid.RefusalHeader(431)[requestid.DefaultHeader]
	if len(a) != 1 || !requestid.Valid(a[0]) || len(b) != 1 || !requestid.Valid(b[0]) || a[0] == b[0] {
		t.Fatalf("%q %q", a, b)
	}
}
