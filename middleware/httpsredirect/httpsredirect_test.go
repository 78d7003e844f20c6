package httpsredirect_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/celeris-dev/celeris/middleware/httpsredirect"
)

// A server with a plaintext and a TLS listener: the middleware sends plaintext
// requests (any method, any path, routed or not) to the TLS listener with a 308 and
// lets TLS ones through; with TrustForwardedProto, a request a TLS-terminating
// proxy forwarded is let through.
func TestRedirect(t *testing.T) {
	cert, err := selfcert.New("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	// The TLS port is known only once the server listens: reserve one.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tlsAddr := ln.Addr().String()
	ln.Close()
	_, tlsPort, _ := net.SplitHostPort(tlsAddr)
	s := celeris.New(celeris.Config{Addr: "127.0.0.1:0", TLSAddr: tlsAddr,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}})
	s.Pre(httpsredirect.New(httpsredirect.Config{TLSPort: tlsPort}))
	s.POST("/upload", func(c *celeris.Context) error {
		b, err := c.Body()
		if err != nil {
			return err
		}
		return c.String(200, c.Scheme()+" "+string(b))
	})
	errc := make(chan error, 1)
	go func() { errc <- s.Start() }()
	select {
	case <-s.Ready():
	case err := <-errc:
		t.Skipf("start (the reserved port was taken meanwhile?): %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not ready")
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("start: %v", err)
		}
	}()
	plain := s.Addr().String()

	noFollow := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/upload?x=1", "/nowhere"} {
		resp, err := noFollow.Post("http://"+plain+path, "text/plain", strings.NewReader("abc"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := "https://127.0.0.1:" + tlsPort + path; resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
			t.Fatalf("%s: %d %q, want 308 %q", path, resp.StatusCode, resp.Header.Get("Location"), want)
		}
	}

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Pool(), ServerName: "localhost"}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Post("http://"+plain+"/upload?x=1", "text/plain", strings.NewReader("abc"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "https abc" || resp.ProtoMajor != 2 {
		t.Fatalf("followed: %s %q", resp.Proto, b)
	}

	req, _ := http.NewRequest("POST", "http://"+plain+"/upload", strings.NewReader("abc"))
	req.Header.Set("X-Forwarded-Proto", "https")
	resp, err = noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusPermanentRedirect {
		t.Fatalf("X-Forwarded-Proto without TrustForwardedProto: %d", resp.StatusCode)
	}
}

// Skip exempts plaintext requests; HSTS goes on HTTPS answers (a TLS
// connection, or a trusted X-Forwarded-Proto) and never on plaintext ones.
func TestSkipAndHSTS(t *testing.T) {
	cert, err := selfcert.New("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s := celeris.New(celeris.Config{Addr: "127.0.0.1:0", TLSAddr: "127.0.0.1:0",
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}})
	s.Pre(httpsredirect.New(httpsredirect.Config{
		Skip:       func(c *celeris.Context) bool { return c.Path() == "/healthz" },
		HSTSMaxAge: 10 * time.Minute, HSTSIncludeSubdomains: true, TrustForwardedProto: true,
	}))
	s.GET("/*path", func(c *celeris.Context) error { return c.String(200, c.Scheme()) })
	plain := "http://" + celeristest.Start(t, s)
	secureURL := "https://" + s.TLSAddr().String()
	noFollow := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Pool()}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	tlsClient := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	const hsts = "max-age=600; includeSubDomains"
	for _, tt := range []struct {
		name   string
		client *http.Client
		url    string
		header string
		status int
		hsts   string
	}{
		{name: "skipped", client: noFollow, url: plain + "/healthz", status: 200},
		{name: "redirected", client: noFollow, url: plain + "/a", status: 308},
		{name: "tls", client: tlsClient, url: secureURL + "/a", status: 200, hsts: hsts},
		{name: "tls skipper path", client: tlsClient, url: secureURL + "/healthz", status: 200, hsts: hsts},
		{name: "forwarded https", client: noFollow, url: plain + "/a", header: "https", status: 200, hsts: hsts},
	} {
		req, _ := http.NewRequest("GET", tt.url, nil)
		if tt.header != "" {
			req.Header.Set("X-Forwarded-Proto", tt.header)
		}
		resp, err := tt.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status || resp.Header.Get("Strict-Transport-Security") != tt.hsts {
			t.Errorf("%s: %d HSTS %q, want %d %q", tt.name, resp.StatusCode, resp.Header.Get("Strict-Transport-Security"), tt.status, tt.hsts)
		}
	}
}
