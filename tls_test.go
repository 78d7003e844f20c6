package celeris

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/celeris-dev/celeris/internal/selfcert"
)

// testCert is a self-signed certificate for 127.0.0.1 and localhost, made once.
var testCert = sync.OnceValue(func() *selfcert.Cert {
	c, err := selfcert.New("127.0.0.1", "localhost")
	if err != nil {
		panic(err)
	}
	return c
})

// tlsRoutes answer with what the request saw of its connection.
func tlsRoutes(s *Server) {
	testRoutes(s)
	s.GET("/tls", func(c *Context) error {
		st := c.TLS()
		if st == nil {
			return c.String(200, "plain "+c.Scheme()+" "+c.Proto())
		}
		return c.String(200, fmt.Sprintf("tls %s %s alpn=%q sni=%q v=%x peers=%d", c.Scheme(), c.Proto(),
			st.NegotiatedProtocol, st.ServerName, st.Version, len(st.PeerCertificates)))
	})
	s.GET("/tls-adapt", Adapt(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			io.WriteString(w, "adapt plain")
			return
		}
		io.WriteString(w, "adapt tls "+r.TLS.NegotiatedProtocol)
	})))
	s.GET("/tls-inline", func(c *Context) error {
		return c.String(200, "inline "+c.Scheme()+" "+c.Proto())
	}).Inline()
}

// startTLSServer starts a server with a plaintext listener and a TLS one (the
// test certificate unless cfg has a TLSConfig) and returns both addresses.
func startTLSServer(t *testing.T, cfg Config, register func(*Server)) (s *Server, plain, secure string) {
	t.Helper()
	cfg.TLSAddr = "127.0.0.1:0"
	if cfg.TLSConfig == nil {
		cfg.TLSConfig = &tls.Config{Certificates: []tls.Certificate{testCert().TLS}}
	}
	s, plain = startServer(t, cfg, register)
	return s, plain, s.TLSAddr().String()
}

// tlsClient is a net/http client trusting the test certificate: HTTP/2 by ALPN
// when h2, else HTTP/1.1 only.
func tlsClient(t *testing.T, h2 bool) *http.Client {
	tc := &tls.Config{RootCAs: testCert().Pool(), ServerName: "localhost"}
	tr := &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: h2}
	if !h2 {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		tc.NextProtos = []string{"http/1.1"}
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func getBody(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return resp, bodyString(t, resp)
}

// Over TLS, ALPN picks the protocol: h2 for a client offering it, HTTP/1.1 for
// one offering http/1.1 or nothing; the request sees the TLS state and the https
// scheme. The plaintext listener serves the same routes, without TLS state.
func TestTLSALPN(t *testing.T) {
	t.Parallel()
	for _, eng := range []Engine{EngineAuto, EngineStd} {
		t.Run("plain="+string(eng), func(t *testing.T) {
			_, plain, secure := startTLSServer(t, Config{Engine: eng}, tlsRoutes)
			for _, tc := range []struct {
				name string
				h2   bool
				want string
			}{
				{name: "h2", h2: true, want: `tls https HTTP/2.0 alpn="h2" sni="localhost" v=304 peers=0`},
				{name: "http/1.1", h2: false, want: `tls https HTTP/1.1 alpn="http/1.1" sni="localhost" v=304 peers=0`},
			} {
				c := tlsClient(t, tc.h2)
				for range 3 { // safe-mode routes: worker wake-ups over TLS
					resp, body := getBody(t, c, "https://"+secure+"/tls")
					if body != tc.want {
						t.Fatalf("%s: %q, want %q", tc.name, body, tc.want)
					}
					if tc.h2 != (resp.ProtoMajor == 2) {
						t.Fatalf("%s: served over %s", tc.name, resp.Proto)
					}
				}
				_, body := getBody(t, c, "https://"+secure+"/tls-inline")
				if want := "inline https HTTP/" + map[bool]string{true: "2.0", false: "1.1"}[tc.h2]; body != want {
					t.Fatalf("%s inline: %q, want %q", tc.name, body, want)
				}
				_, body = getBody(t, c, "https://"+secure+"/tls-adapt")
				if want := "adapt tls " + map[bool]string{true: "h2", false: "http/1.1"}[tc.h2]; body != want {
					t.Fatalf("%s adapted: %q, want %q", tc.name, body, want)
				}
				_, body = getBody(t, c, "https://"+secure+"/users/7/posts/9")
				if body != "user=7 post=9" {
					t.Fatalf("%s: %q", tc.name, body)
				}
			}
			// No ALPN at all: HTTP/1.1.
			conn, err := tls.Dial("tcp", secure, &tls.Config{RootCAs: testCert().Pool(), ServerName: "localhost"})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprint(conn, "GET /tls HTTP/1.1\r\nHost: localhost\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			if body := bodyString(t, resp); body != `tls https HTTP/1.1 alpn="" sni="localhost" v=304 peers=0` {
				t.Fatalf("no ALPN: %q", body)
			}
			_, body := getBody(t, &http.Client{Timeout: 10 * time.Second}, "http://"+plain+"/tls")
			if body != "plain http HTTP/1.1" {
				t.Fatalf("plaintext: %q", body)
			}
		})
	}
}

// A TLS 1.2 connection is served too, and its client certificate is visible.
func TestTLSClientCertAndTLS12(t *testing.T) {
	t.Parallel()
	cert := testCert()
	_, _, secure := startTLSServer(t, Config{TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{cert.TLS},
		ClientAuth:   tls.RequireAnyClientCert,
	}}, tlsRoutes)
	tr := &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: cert.Pool(), ServerName: "localhost", MaxVersion: tls.VersionTLS12,
		Certificates: []tls.Certificate{cert.TLS},
	}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	_, body := getBody(t, &http.Client{Transport: tr, Timeout: 10 * time.Second}, "https://"+secure+"/tls")
	if want := `tls https HTTP/2.0 alpn="h2" sni="localhost" v=303 peers=1`; body != want {
		t.Fatalf("%q, want %q", body, want)
	}
}

// Over TLS, HTTP/1.1 does not switch to h2c on Upgrade: h2c (RFC 9113 §3.2: h2
// is negotiated by ALPN there).
func TestTLSNoH2CUpgrade(t *testing.T) {
	t.Parallel()
	_, _, secure := startTLSServer(t, Config{}, tlsRoutes)
	conn, err := tls.Dial("tcp", secure, &tls.Config{RootCAs: testCert().Pool(), ServerName: "localhost", NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprint(conn, "GET /tls HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if body := bodyString(t, resp); resp.StatusCode != 200 || !strings.HasPrefix(body, "tls https HTTP/1.1") {
		t.Fatalf("%d %q, want 200 over HTTP/1.1", resp.StatusCode, body)
	}
}

// readUntilClosed reads from c until the server closes it; it fails the test if
// that takes longer than limit.
func readUntilClosed(t *testing.T, c net.Conn, limit time.Duration) []byte {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(limit))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %v", limit)
	}
	return b
}

// A client that sends garbage instead of a ClientHello is closed at once and
// logs nothing (any client can cause that per connection); one that speaks plain
// HTTP to the TLS port gets a 400 saying so, as from net/http.
func TestTLSGarbageClientHello(t *testing.T) {
	t.Parallel()
	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, _, secure := startTLSServer(t, Config{Logger: logger}, tlsRoutes)
	for _, garbage := range []string{
		"\x16\x03\x01\x00\x10this is no hello",
		"\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f",
		"SSH-2.0-OpenSSH_9.6\r\n",
	} {
		c, err := net.Dial("tcp", secure)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, garbage)
		// Within half the default 10 s TLSHandshakeTimeout: closed for the
		// garbage, not by the timer.
		readUntilClosed(t, c, 5*time.Second)
		c.Close()
	}
	c, err := net.Dial("tcp", secure)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := string(readUntilClosed(t, c, 5*time.Second)); !strings.HasPrefix(got, "HTTP/1.0 400 Bad Request") || !strings.Contains(got, "HTTPS server") {
		t.Fatalf("plain HTTP on the TLS port: %q", got)
	}
	c.Close()
	waitFor(t, "the connections to close", func() bool { return s.Stats().OpenConnections == 0 })
	if n := s.Stats().TLSHandshakeErrors; n != 4 {
		t.Errorf("Stats().TLSHandshakeErrors = %d, want 4", n)
	}
	if l := logs.String(); l != "" {
		t.Fatalf("logged:\n%s", l)
	}
}

// A client that opens a connection and stalls in the handshake (nothing sent, or
// a ClientHello cut short) is closed after TLSHandshakeTimeout.
func TestTLSHandshakeTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	s, _, secure := startTLSServer(t, Config{TLSHandshakeTimeout: timeout}, tlsRoutes)
	for _, sent := range []string{"", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"} {
		// The server's timer starts at accept, after start: closed no sooner
		// than timeout, and (readUntilClosed) within half the default 10 s.
		start := time.Now()
		c, err := net.Dial("tcp", secure)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, sent)
		readUntilClosed(t, c, 5*time.Second)
		if d := time.Since(start); d < timeout {
			t.Fatalf("sent %q: closed after %v, before the %v timeout", sent, d, timeout)
		}
		c.Close()
	}
	waitFor(t, "the connections to close", func() bool { return s.Stats().OpenConnections == 0 })
	if n := s.Stats().TLSHandshakeErrors; n != 2 {
		t.Errorf("Stats().TLSHandshakeErrors = %d, want 2", n)
	}
}

// A server that allows a cipher suite RFC 9113 §9.2.2 forbids answers h2 on it
// with GOAWAY INADEQUATE_SECURITY, as golang.org/x/net/http2 does; HTTP/1.1 on
// the same suite is served.
func TestTLSInadequateSecurity(t *testing.T) {
	t.Parallel()
	const weak = tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA
	_, _, secure := startTLSServer(t, Config{TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{testCert().TLS},
		CipherSuites: []uint16{weak},
		MaxVersion:   tls.VersionTLS12,
	}}, tlsRoutes)
	dial := func(proto string) *tls.Conn {
		c, err := tls.Dial("tcp", secure, &tls.Config{
			RootCAs: testCert().Pool(), ServerName: "localhost", NextProtos: []string{proto},
			CipherSuites: []uint16{weak}, MaxVersion: tls.VersionTLS12,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if st := c.ConnectionState(); st.CipherSuite != weak || st.NegotiatedProtocol != proto {
			t.Fatalf("negotiated %x %q", st.CipherSuite, st.NegotiatedProtocol)
		}
		return c
	}
	c := dial("h2")
	io.WriteString(c, http2.ClientPreface)
	fr := http2.NewFramer(io.Discard, c)
	f, err := fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	ga, ok := f.(*http2.GoAwayFrame)
	if !ok || ga.ErrCode != http2.ErrCodeInadequateSecurity {
		t.Fatalf("first frame %v, want GOAWAY INADEQUATE_SECURITY", f)
	}
	readUntilClosed(t, c, 5*time.Second)

	c = dial("http/1.1")
	io.WriteString(c, "GET /tls HTTP/1.1\r\nHost: localhost\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if body := bodyString(t, resp); !strings.HasPrefix(body, "tls https HTTP/1.1") {
		t.Fatalf("HTTP/1.1: %q", body)
	}
}

// StartTLS serves HTTPS alone on Config.Addr, with the certificate from PEM files;
// Shutdown ends it, with a request in flight finishing first.
func TestStartTLSCertFiles(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, testCert().CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, testCert().KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	s := New(Config{Addr: "127.0.0.1:0"})
	tlsRoutes(s)
	errc := make(chan error, 1)
	go func() { errc <- s.StartTLS(certFile, keyFile) }()
	select {
	case <-s.Ready():
	case err := <-errc:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("not ready")
	}
	addr := s.Addr().String()
	c := tlsClient(t, true)
	_, body := getBody(t, c, "https://"+addr+"/tls")
	if !strings.HasPrefix(body, "tls https HTTP/2.0") {
		t.Fatalf("%q", body)
	}
	// The first request's handler may still count as active a moment after its
	// answer arrived: the count of 1 awaited below must be the slow request's.
	waitFor(t, "the first request to end", func() bool { return s.Stats().ActiveRequests == 0 })
	slow := make(chan string, 1)
	go func() {
		resp, err := tlsClient(t, false).Get("https://" + addr + "/held")
		if err != nil {
			slow <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		slow <- string(b)
	}()
	waitFor(t, "the slow request", func() bool { return s.Stats().ActiveRequests == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if got := <-slow; got != "OK" {
		t.Fatalf("in-flight request: %q", got)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("StartTLS returned %v", err)
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Fatal("still accepting after Shutdown")
	}
}

// Without a certificate, starting TLS fails with a clear error.
func TestTLSNeedsCertificate(t *testing.T) {
	s := New(Config{Addr: "127.0.0.1:0", TLSAddr: "127.0.0.1:0"})
	if err := s.Start(); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("Start = %v", err)
	}
}

// Graceful shutdown drains the plaintext and the TLS listener together; a
// request's context is cancelled when its TLS client leaves.
func TestTLSShutdownAndCancel(t *testing.T) {
	t.Parallel()
	cancelled := make(chan struct{}, 1)
	s, plain, secure := startTLSServer(t, Config{}, func(s *Server) {
		tlsRoutes(s)
		s.GET("/wait", func(c *Context) error {
			select {
			case <-c.Context().Done():
				cancelled <- struct{}{}
			case <-time.After(5 * time.Second):
			}
			return nil
		})
	})
	conn, err := tls.Dial("tcp", secure, &tls.Config{RootCAs: testCert().Pool(), ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(conn, "GET /wait HTTP/1.1\r\nHost: localhost\r\n\r\n")
	waitFor(t, "the request", func() bool { return s.Stats().ActiveRequests == 1 })
	if n := s.Stats().OpenConnections; n != 1 {
		t.Fatalf("Stats().OpenConnections = %d with one TLS connection", n)
	}
	conn.Close()
	select {
	case <-cancelled:
	case <-time.After(3 * time.Second):
		t.Fatal("context not cancelled when the TLS client left")
	}

	results := make(chan string, 2)
	for _, url := range []string{"http://" + plain + "/held", "https://" + secure + "/held"} {
		go func() {
			resp, err := tlsClient(t, true).Get(url)
			if err != nil {
				results <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			results <- string(b)
		}()
	}
	waitFor(t, "both requests", func() bool { return s.Stats().ActiveRequests == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got := <-results; got != "OK" {
			t.Fatalf("in-flight request: %q", got)
		}
	}
	for _, a := range []string{plain, secure} {
		if _, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			t.Fatalf("%s still accepting after Shutdown", a)
		}
	}
}

// curl speaks HTTP/2 and HTTP/1.1 over TLS to the server (skipped without curl).
func TestTLSCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not installed")
	}
	_, _, secure := startTLSServer(t, Config{}, tlsRoutes)
	for _, tc := range []struct{ flag, version, want string }{
		{"--http2", "2", `tls https HTTP/2.0 alpn="h2"`},
		{"--http1.1", "1.1", `tls https HTTP/1.1 alpn="http/1.1"`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		out, err := exec.CommandContext(ctx, curl, "-sS", "-k", tc.flag, "-w", "\n%{http_version}", "https://localhost:"+portOf(secure)+"/tls",
			"--resolve", "localhost:"+portOf(secure)+":127.0.0.1").CombinedOutput()
		cancel()
		if err != nil {
			if tc.version == "2" && strings.Contains(string(out), "HTTP2") {
				t.Skipf("curl without HTTP/2: %s", out)
			}
			t.Fatalf("curl %s: %v: %s", tc.flag, err, out)
		}
		body, version, _ := strings.Cut(string(out), "\n")
		if !strings.HasPrefix(body, tc.want) || version != tc.version {
			t.Fatalf("curl %s: %q over %q, want %q over %s", tc.flag, body, version, tc.want, tc.version)
		}
	}
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// Many goroutines share one h2 TLS connection, others a pool of HTTP/1.1 TLS
// connections; large answers arrive whole to a client that reads slowly, and a
// large upload is read whole.
func TestTLSConcurrentAndLarge(t *testing.T) {
	t.Parallel()
	_, _, secure := startTLSServer(t, Config{MaxRequestBodySize: 64 << 20}, tlsRoutes)
	for _, h2 := range []bool{true, false} {
		c := tlsClient(t, h2)
		var wg sync.WaitGroup
		errs := make(chan error, 50)
		for g := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 10 {
					resp, err := c.Get(fmt.Sprintf("https://%s/users/%d/posts/%d", secure, g, i))
					if err != nil {
						errs <- err
						return
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if want := fmt.Sprintf("user=%d post=%d", g, i); string(b) != want {
						errs <- fmt.Errorf("%q, want %q", b, want)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("h2=%v: %v", h2, err)
		}
		resp, err := c.Get("https://" + secure + "/download?size=16777216")
		if err != nil {
			t.Fatal(err)
		}
		// A slow reader at first, so that the output backs up, then a fast one.
		first, _ := readSlowly(io.LimitReader(resp.Body, 2<<20), 256<<10, 5*time.Millisecond)
		rest, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n := first + rest; n != 16<<20 {
			t.Fatalf("h2=%v: download got %d bytes", h2, n)
		}
		resp, err = c.Post("https://"+secure+"/upload", "application/octet-stream", bytes.NewReader(make([]byte, 8<<20)))
		if err != nil {
			t.Fatal(err)
		}
		if body := bodyString(t, resp); body != "8388608" {
			t.Fatalf("h2=%v: upload: %q", h2, body)
		}
	}
}
