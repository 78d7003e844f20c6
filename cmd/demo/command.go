// Command demo runs the Celeris demo server (package internal/demo): the routes
// of ../../README.md over HTTP/1.1 and h2c on one port, and with -tls-addr over
// HTTPS (h2 and HTTP/1.1 by ALPN) and HTTP/3 on the same port number over UDP
// (-h3=false turns HTTP/3 off); TLS responses advertise HTTP/3 with Alt-Svc.
// It registers the compress module's zstd and brotli encoders, so /json answers
// zstd, br or gzip as Accept-Encoding asks.
//
// It is a module of its own, so that the core module does not require quic-go;
// the repository's go.work makes `go run ./cmd/demo` work from the root.
package main

import (
	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/compress"
	celerish3 "github.com/celeris-dev/celeris/http3"
	"github.com/celeris-dev/celeris/internal/demo"
)

func main() {
	compress.Register() // before the routes are built: /json's middleware offers zstd, br, gzip
	demo.Main(func(s *celeris.Server) { celerish3.Enable(s, celerish3.Config{}) })
}
