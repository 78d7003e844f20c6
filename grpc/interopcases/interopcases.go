// Package interopcases runs grpc-go's interop client cases
// (google.golang.org/grpc/interop) by name, for tests that prove a server against
// them: the celerisgrpc module's own and the interop module's (through Adapt).
// grpc-go's case functions end the process on failure (log.Fatal), so a test
// runs each case in a child process.
package interopcases

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	grpcinterop "google.golang.org/grpc/interop"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
)

// Names are grpc-go's interop client cases that need no credentials or load
// balancer (interop/client/client.go), in its order.
var Names = []string{
	"empty_unary", "large_unary", "client_streaming", "server_streaming", "ping_pong",
	"empty_stream", "timeout_on_sleeping_server", "cancel_after_begin",
	"cancel_after_first_response", "custom_metadata", "status_code_and_message",
	"special_status_message", "unimplemented_method", "unimplemented_service",
}

// Run runs the case name over conn. It returns an error only for a name it does
// not know; a case that fails ends the process.
func Run(ctx context.Context, name string, conn *grpc.ClientConn) error {
	client := testgrpc.NewTestServiceClient(conn)
	switch name {
	case "empty_unary":
		grpcinterop.DoEmptyUnaryCall(ctx, client)
	case "large_unary":
		grpcinterop.DoLargeUnaryCall(ctx, client)
	case "client_streaming":
		grpcinterop.DoClientStreaming(ctx, client)
	case "server_streaming":
		grpcinterop.DoServerStreaming(ctx, client)
	case "ping_pong":
		grpcinterop.DoPingPong(ctx, client)
	case "empty_stream":
		grpcinterop.DoEmptyStream(ctx, client)
	case "timeout_on_sleeping_server":
		grpcinterop.DoTimeoutOnSleepingServer(ctx, client)
	case "cancel_after_begin":
		grpcinterop.DoCancelAfterBegin(ctx, client)
	case "cancel_after_first_response":
		grpcinterop.DoCancelAfterFirstResponse(ctx, client)
	case "custom_metadata":
		grpcinterop.DoCustomMetadata(ctx, client)
	case "status_code_and_message":
		grpcinterop.DoStatusCodeAndMessage(ctx, client)
	case "special_status_message":
		grpcinterop.DoSpecialStatusMessage(ctx, client)
	case "unimplemented_method":
		grpcinterop.DoUnimplementedMethod(ctx, conn)
	case "unimplemented_service":
		grpcinterop.DoUnimplementedService(ctx, testgrpc.NewUnimplementedServiceClient(conn))
	default:
		return fmt.Errorf("unknown interop case %q", name)
	}
	return nil
}
