package celerisgrpc_test

import (
	"context"
	"log"

	"google.golang.org/grpc"
	grpcinterop "google.golang.org/grpc/interop"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"

	"github.com/celeris-dev/celeris"
	celerisgrpc "github.com/celeris-dev/celeris/grpc"
)

// Serve a gRPC service (registered by generated code) natively, next to REST
// routes on the same port.
func Example() {
	srv := celerisgrpc.NewServer(
		celerisgrpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return h(ctx, req) // logging, auth, metrics...
		}),
	)
	testgrpc.RegisterTestServiceServer(srv, grpcinterop.NewTestServer())

	s := celeris.New(celeris.Config{Addr: "127.0.0.1:8080"})
	s.GET("/health", func(c *celeris.Context) error { return c.String(200, "ok") })
	s.POST("/grpc.testing.TestService/*method", celeris.Adapt(srv)) // native: Adapt sees a NativeHandler
	if false {
		log.Fatal(s.Start())
	}
	// Output:
}
