package compress_test

import (
	"log"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/compress"
	mwcompress "github.com/celeris-dev/celeris/middleware/compress"
)

// Register before building the middleware: Default then offers zstd, br and
// gzip, preferred in that order when a client accepts several equally.
func Example() {
	compress.Register()
	s := celeris.New(celeris.Config{Addr: ":8080"})
	s.Use(mwcompress.Default())
	s.GET("/events", func(c *celeris.Context) error {
		w, err := c.SSE() // each event is encoded and flushed as it is sent
		if err != nil {
			return err
		}
		return w.Send(celeris.Event{Data: "hello"})
	})
	log.Fatal(s.Start())
}

// Encoders per middleware, in the server's order of preference, with levels.
func Example_encoders() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	s.Use(mwcompress.New(mwcompress.Config{Encoders: []mwcompress.Encoder{
		compress.Brotli(5), compress.Zstd(3), compress.Gzip(6),
	}}))
	log.Fatal(s.Start())
}
