package celeris_test

import (
	"crypto/tls"
	"log"
	"net/http"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/httpsredirect"
)

// HTTPS alone on Config.Addr, as net/http's ListenAndServeTLS.
func ExampleServer_StartTLS() {
	s := celeris.New(celeris.Config{Addr: ":8443"})
	s.GET("/", func(c *celeris.Context) error {
		return c.String(http.StatusOK, "hello over "+c.TLS().NegotiatedProtocol)
	})
	log.Fatal(s.StartTLS("cert.pem", "key.pem"))
}

// Plaintext and HTTPS from one router: plaintext requests are redirected, and
// SIGINT or SIGTERM drains both listeners.
func ExampleServer_Start_tls() {
	s := celeris.New(celeris.Config{
		Addr:      ":8080",
		TLSAddr:   ":8443",
		TLSConfig: &tls.Config{ /* Certificates or GetCertificate (autocert) */ },
	})
	s.Pre(httpsredirect.New(httpsredirect.Config{TLSPort: "8443"}))
	s.GET("/", func(c *celeris.Context) error { return c.String(http.StatusOK, "secure") })
	log.Fatal(s.StartGraceful(15 * time.Second))
}
