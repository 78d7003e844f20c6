package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// loadConfig is what the loader sends.
type loadConfig struct {
	Addr       string
	Scenario   string // "unary" or "stream"
	Conns      int    // client connections
	Streams    int    // concurrent RPCs per connection
	Size       int    // payload bytes
	StreamMsgs int    // messages per server-streaming RPC
}

// unit names what a scenario counts.
func unit(scenario string) string {
	if scenario == "stream" {
		return "msgs"
	}
	return "RPCs"
}

// loader keeps Conns x Streams RPCs in flight until stopped. It counts
// completed unary RPCs, or streamed messages received, in units.
type loader struct {
	cfg      loadConfig
	conns    []*grpc.ClientConn
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	units    atomic.Int64
	errs     atomic.Int64
	firstErr atomic.Pointer[error]
	unaryReq *testpb.SimpleRequest
	streamRq *testpb.StreamingOutputCallRequest
}

// startLoad dials the connections, checks each with one RPC, and starts the
// workers.
func startLoad(cfg loadConfig) (*loader, error) {
	if cfg.Scenario != "unary" && cfg.Scenario != "stream" {
		return nil, fmt.Errorf("unknown scenario %q (want unary or stream)", cfg.Scenario)
	}
	if cfg.Conns < 1 || cfg.Streams < 1 || cfg.Size < 0 || cfg.StreamMsgs < 1 {
		return nil, errors.New("conns, streams and stream-msgs must be at least 1, size at least 0")
	}
	l := &loader{cfg: cfg}
	// The requests are built once: proto messages may be marshalled concurrently.
	l.unaryReq = &testpb.SimpleRequest{
		ResponseSize: int32(cfg.Size),
		Payload:      &testpb.Payload{Body: make([]byte, cfg.Size)},
	}
	params := make([]*testpb.ResponseParameters, cfg.StreamMsgs)
	for i := range params {
		params[i] = &testpb.ResponseParameters{Size: int32(cfg.Size)}
	}
	l.streamRq = &testpb.StreamingOutputCallRequest{ResponseParameters: params}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	for range cfg.Conns {
		cc, err := grpc.NewClient("passthrough:///"+cfg.Addr,
			grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			l.stop()
			return nil, err
		}
		l.conns = append(l.conns, cc)
		ctx, cancel := context.WithTimeout(l.ctx, 5*time.Second)
		_, err = l.call(ctx, testpb.NewTestServiceClient(cc))
		cancel()
		if err != nil {
			l.stop()
			return nil, fmt.Errorf("first %s RPC to %s: %w", cfg.Scenario, cfg.Addr, err)
		}
	}
	for _, cc := range l.conns {
		client := testpb.NewTestServiceClient(cc)
		for range cfg.Streams {
			l.wg.Add(1)
			go l.worker(client)
		}
	}
	return l, nil
}

func (l *loader) worker(client testpb.TestServiceClient) {
	defer l.wg.Done()
	for l.ctx.Err() == nil {
		n, err := l.call(l.ctx, client)
		l.units.Add(int64(n))
		if err != nil && l.ctx.Err() == nil {
			l.errs.Add(1)
			l.firstErr.CompareAndSwap(nil, &err)
			time.Sleep(10 * time.Millisecond) // a failing server is not hammered
		}
	}
}

// call makes one RPC and returns the units it completed: 1 for a unary call,
// the messages received for a stream.
func (l *loader) call(ctx context.Context, client testpb.TestServiceClient) (int, error) {
	if l.cfg.Scenario == "unary" {
		resp, err := client.UnaryCall(ctx, l.unaryReq)
		if err != nil {
			return 0, err
		}
		if got := len(resp.GetPayload().GetBody()); got != l.cfg.Size {
			return 0, fmt.Errorf("unary: %d payload bytes, want %d", got, l.cfg.Size)
		}
		return 1, nil
	}
	stream, err := client.StreamingOutputCall(ctx, l.streamRq)
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		resp, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if n != l.cfg.StreamMsgs {
					return n, fmt.Errorf("stream: %d messages, want %d", n, l.cfg.StreamMsgs)
				}
				return n, nil
			}
			return n, err
		}
		if got := len(resp.GetPayload().GetBody()); got != l.cfg.Size {
			return n, fmt.Errorf("stream: %d payload bytes, want %d", got, l.cfg.Size)
		}
		n++
	}
}

// err returns the number of failed RPCs (while running) and the first failure.
func (l *loader) err() (int64, error) {
	if p := l.firstErr.Load(); p != nil {
		return l.errs.Load(), *p
	}
	return l.errs.Load(), nil
}

// stop ends every RPC, waits for the workers and closes the connections.
func (l *loader) stop() {
	l.cancel()
	l.wg.Wait()
	for _, cc := range l.conns {
		_ = cc.Close()
	}
}

// loadMode runs the loader for d and prints what it completed.
func loadMode(cfg loadConfig, d time.Duration) error {
	l, err := startLoad(cfg)
	if err != nil {
		return err
	}
	start := time.Now()
	time.Sleep(d)
	n := l.units.Load()
	el := time.Since(start)
	errs, first := l.err()
	l.stop()
	fmt.Printf("%s %s: %d %s in %v (%.0f/s), %d errors\n", cfg.Addr, cfg.Scenario, n, unit(cfg.Scenario),
		el.Round(time.Millisecond), float64(n)/el.Seconds(), errs)
	if first != nil {
		return fmt.Errorf("first error: %w", first)
	}
	return nil
}
