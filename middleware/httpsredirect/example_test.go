package httpsredirect_test

import (
	"log"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/httpsredirect"
)

func Example() {
	s := celeris.New(celeris.Config{
		Addr:        ":80",
		TLSAddr:     ":443",
		TLSCertFile: "cert.pem",
		TLSKeyFile:  "key.pem",
	})
	// Pre: requests that match no route are redirected too.
	s.Pre(httpsredirect.New(httpsredirect.Config{}))
	s.GET("/", func(c *celeris.Context) error { return c.String(200, "secure") })
	log.Fatal(s.StartGraceful(15 * time.Second))
}

func Example_hsts() {
	s := celeris.New(celeris.Config{Addr: ":80", TLSAddr: ":443", TLSCertFile: "cert.pem", TLSKeyFile: "key.pem"})
	s.Pre(httpsredirect.New(httpsredirect.Config{
		HSTSMaxAge: 365 * 24 * time.Hour,
		// The load balancer probes over plaintext.
		Skip: func(c *celeris.Context) bool { return c.Path() == "/healthz" },
	}))
	s.GET("/healthz", func(c *celeris.Context) error { return c.NoContent(204) })
	log.Fatal(s.Start())
}
