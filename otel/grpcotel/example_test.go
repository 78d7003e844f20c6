package grpcotel_test

import (
	"log"

	"github.com/celeris-dev/celeris"
	celerisgrpc "github.com/celeris-dev/celeris/grpc"
	celerisotel "github.com/celeris-dev/celeris/otel"
	"github.com/celeris-dev/celeris/otel/grpcotel"
)

// Trace the RPCs of the native gRPC server next to the REST routes' requests:
// the interceptors make the RPC spans (rpc.*), the middleware the HTTP ones.
// Both use the global providers set with otel.SetTracerProvider and
// otel.SetMeterProvider unless options say otherwise.
func Example() {
	srv := celerisgrpc.NewServer(
		celerisgrpc.UnaryInterceptor(grpcotel.UnaryServerInterceptor()),
		celerisgrpc.StreamInterceptor(grpcotel.StreamServerInterceptor()),
	)
	// pb.RegisterGreeterServer(srv, impl): generated code registers unchanged.

	s := celeris.New(celeris.Config{Addr: "127.0.0.1:8080"})
	s.Use(celerisotel.Middleware(celerisotel.WithFilter(func(c *celeris.Context) bool {
		return c.RoutePattern() != "/*rpc" // RPCs have their own spans
	})))
	s.POST("/*rpc", srv.Handler())
	if false {
		log.Fatal(s.Start())
	}
	// Output:
}
