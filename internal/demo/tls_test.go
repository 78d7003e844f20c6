package demo

import (
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/selfcert"
)

// startDemoTLS starts the demo with o (on 127.0.0.1:0, TLS too) and returns the
// plaintext and TLS base URLs.
func startDemoTLS(t *testing.T, o options) (plain, secure string) {
	t.Helper()
	o.addr, o.tlsAddr, o.loops = "127.0.0.1:0", "127.0.0.1:0", 2
	s, err := newServerWith(o)
	if err != nil {
		t.Fatal(err)
	}
	plain = "http://" + celeristest.Start(t, s)
	return plain, "https://" + s.TLSAddr().String()
}

// tlsClients speak h2 and HTTP/1.1 over TLS; roots nil trusts any certificate
// (the demo's self-signed one).
func tlsClients(t *testing.T, roots *selfcert.Cert) map[string]*http.Client {
	out := map[string]*http.Client{}
	for _, h2 := range []bool{true, false} {
		tc := &tls.Config{InsecureSkipVerify: roots == nil}
		if roots != nil {
			tc.RootCAs, tc.ServerName = roots.Pool(), "localhost"
		}
		tr := &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: h2, DisableCompression: true}
		name := "tls-h2"
		if !h2 {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
			tc.NextProtos = []string{"http/1.1"}
			name = "tls-h1"
		}
		t.Cleanup(tr.CloseIdleConnections)
		out[name] = &http.Client{Transport: tr, Timeout: 30 * time.Second}
	}
	return out
}

// TestDemoTLS: with -tls-addr every route of the contract is served over TLS
// (h2 and HTTP/1.1 by ALPN), with the self-signed certificate made at start or
// with -tls-cert and -tls-key; -engine std serves the plaintext listener too.
func TestDemoTLS(t *testing.T) {
	t.Parallel()
	t.Run("self-signed", func(t *testing.T) {
		plain, secure := startDemoTLS(t, options{})
		for name, client := range tlsClients(t, nil) {
			t.Run(name, func(t *testing.T) {
				resp, err := client.Get(secure + "/bench")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if want := map[string]int{"tls-h2": 2, "tls-h1": 1}[name]; resp.ProtoMajor != want {
					t.Fatalf("served over %s", resp.Proto)
				}
				checkContract(t, secure, client)
			})
		}
		checkContract(t, plain, clients()["h2c"])
	})
	t.Run("files, engine std", func(t *testing.T) {
		cert, err := selfcert.New("localhost", "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		o := options{engine: "std", tlsCert: filepath.Join(dir, "c.pem"), tlsKey: filepath.Join(dir, "k.pem")}
		if err := os.WriteFile(o.tlsCert, cert.CertPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(o.tlsKey, cert.KeyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		plain, secure := startDemoTLS(t, o)
		checkContract(t, secure, tlsClients(t, cert)["tls-h2"])
		for name, client := range clients() {
			t.Run("std-"+name, func(t *testing.T) { checkContract(t, plain, client) })
		}
	})
}
