// Package celerisgrpc serves gRPC on Celeris natively: generated service code
// registers on a *Server (it is a grpc.ServiceRegistrar), and the server is an
// http.Handler that celeris.Adapt recognises (celeris.NativeHandler), so
//
//	srv := celerisgrpc.NewServer()
//	pb.RegisterGreeterServer(srv, impl)
//	s.POST("/*rpc", celeris.Adapt(srv)) // or srv.Handler()
//
// serves the service on the Context directly, without the *http.Request,
// goroutines and channels of grpc-go's ServeHTTP transport. Under net/http the
// same value serves through ServeHTTP (h2c or TLS HTTP/2).
//
// Life of an RPC on the native path (ServeCeleris): the request's :path names
// the method (/pkg.Service/Method), looked up in one map; content-type,
// grpc-timeout and grpc-encoding are checked; the request context gets the
// incoming metadata, the peer, the deadline and a grpc.ServerTransportStream
// (so grpc.SetHeader, SendHeader and SetTrailer work in unary handlers). A
// unary request message is read whole (5-byte prefix: compressed flag and
// big-endian length) from the body and decoded with protobuf; the handler's
// reply is encoded into a pooled buffer behind its prefix, and headers, the
// message and the trailers (grpc-status, grpc-message percent-encoded,
// grpc-status-details-bin) are handed to the Context in one pass on the
// handler's goroutine: no goroutine or channel per RPC. Streaming RPCs get a
// grpc.ServerStream over the same body reader and Context.Stream.
//
// Routes serving it must run on worker goroutines (Celeris's default): gRPC
// handlers block. Messages are protobuf (application/grpc or
// application/grpc+proto). A request's grpc-encoding names a compressor
// registered with grpc's encoding package (this package registers gzip): its
// compressed messages are decompressed (MaxRecvMsgSize bounds the compressed
// and the decompressed size) and the answer is compressed with it too, as
// grpc-go's server does; an encoding not registered is answered Unimplemented
// with grpc-accept-encoding, as the gRPC spec says.
//
// Shutdown of the Celeris server ends RPCs as grpc-go's GracefulStop does: its
// HTTP/2 connections send GOAWAY, unary RPCs in flight finish, and streaming RPCs
// get StreamShutdownGrace (default 0) before their context is cancelled, so that a
// health Watch or another endless stream ends (Unavailable) instead of holding
// Shutdown to its deadline.
package celerisgrpc

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/celeris-dev/celeris"
)

// Server serves the services registered on it. Register services before
// serving; RegisterService is not safe to call concurrently with RPCs.
type Server struct {
	opts    options
	methods map[string]*method // by full path, "/pkg.Service/Method"
	info    map[string]grpc.ServiceInfo

	stopMu sync.Mutex
	stops  map[<-chan struct{}]context.Context // shutdownContext's, by ShuttingDown channel
}

// method is one registered RPC.
type method struct {
	name   string // full method name, "/pkg.Service/Method"
	impl   any
	unary  *grpc.MethodDesc
	stream *grpc.StreamDesc
}

// Option configures a Server.
type Option func(*options)

type options struct {
	unaryInt      grpc.UnaryServerInterceptor
	streamInt     grpc.StreamServerInterceptor
	maxRecv       int
	maxSend       int
	unknownStream grpc.StreamHandler
	streamGrace   time.Duration // StreamShutdownGrace
}

// DefaultMaxRecvMsgSize is the largest request message accepted unless
// MaxRecvMsgSize says otherwise (grpc-go's default).
const DefaultMaxRecvMsgSize = 4 << 20

// UnaryInterceptor sets the interceptor around every unary RPC. Chain several
// with grpc.ChainUnaryInterceptor's semantics by composing them yourself, or
// use ChainUnaryInterceptors.
func UnaryInterceptor(i grpc.UnaryServerInterceptor) Option {
	return func(o *options) { o.unaryInt = i }
}

// StreamInterceptor sets the interceptor around every streaming RPC.
func StreamInterceptor(i grpc.StreamServerInterceptor) Option {
	return func(o *options) { o.streamInt = i }
}

// MaxRecvMsgSize is the largest request message (after the 5-byte prefix) the
// server accepts; a larger one ends the RPC with ResourceExhausted. Default 4 MiB.
func MaxRecvMsgSize(n int) Option {
	return func(o *options) { o.maxRecv = n }
}

// MaxSendMsgSize is the largest response message the server sends; a larger
// one fails the RPC with ResourceExhausted. Default: no limit (math.MaxInt32).
func MaxSendMsgSize(n int) Option {
	return func(o *options) { o.maxSend = n }
}

// UnknownServiceHandler serves RPCs to methods no registered service has, as
// grpc.UnknownServiceHandler does (always as a bidirectional stream).
func UnknownServiceHandler(h grpc.StreamHandler) Option {
	return func(o *options) { o.unknownStream = h }
}

// NewServer returns a Server without services.
func NewServer(opts ...Option) *Server {
	s := &Server{
		opts:    options{maxRecv: DefaultMaxRecvMsgSize, maxSend: 1<<31 - 1},
		methods: make(map[string]*method),
		info:    make(map[string]grpc.ServiceInfo),
	}
	for _, o := range opts {
		o(&s.opts)
	}
	return s
}

var _ grpc.ServiceRegistrar = (*Server)(nil)
var _ celeris.NativeHandler = (*Server)(nil)

// RegisterService registers a service and its implementation (grpc.ServiceRegistrar):
// generated RegisterXxxServer functions call it. It panics when impl does not
// implement desc.HandlerType or the service is registered twice, as grpc-go's does.
func (s *Server) RegisterService(desc *grpc.ServiceDesc, impl any) {
	if impl != nil && desc.HandlerType != nil {
		ht := reflectType(desc.HandlerType)
		if !reflectImplements(impl, ht) {
			panic(fmt.Sprintf("celerisgrpc: RegisterService found the handler of type %T that does not satisfy %v", impl, ht))
		}
	}
	if _, dup := s.info[desc.ServiceName]; dup {
		panic(fmt.Sprintf("celerisgrpc: RegisterService found duplicate service registration for %q", desc.ServiceName))
	}
	info := grpc.ServiceInfo{Metadata: desc.Metadata}
	for i := range desc.Methods {
		d := &desc.Methods[i]
		name := "/" + desc.ServiceName + "/" + d.MethodName
		s.methods[name] = &method{name: name, impl: impl, unary: d}
		info.Methods = append(info.Methods, grpc.MethodInfo{Name: d.MethodName})
	}
	for i := range desc.Streams {
		d := &desc.Streams[i]
		name := "/" + desc.ServiceName + "/" + d.StreamName
		s.methods[name] = &method{name: name, impl: impl, stream: d}
		info.Methods = append(info.Methods, grpc.MethodInfo{Name: d.StreamName,
			IsClientStream: d.ClientStreams, IsServerStream: d.ServerStreams})
	}
	s.info[desc.ServiceName] = info
}

// GetServiceInfo reports the registered services, as grpc.Server's does (the
// reflection service uses it).
func (s *Server) GetServiceInfo() map[string]grpc.ServiceInfo {
	out := make(map[string]grpc.ServiceInfo, len(s.info))
	for k, v := range s.info {
		out[k] = v
	}
	return out
}

// Handler returns the native handler, for a route: s.POST("/*rpc", srv.Handler()).
// It is what celeris.Adapt(srv) returns.
func (s *Server) Handler() celeris.HandlerFunc { return s.ServeCeleris }

// lookup finds the method a :path names. ok is false for an unknown one; then
// unknownService says whether the service itself is unknown.
func (s *Server) lookup(path string) (*method, bool) {
	m, ok := s.methods[path]
	return m, ok
}

// unknownMessage is the Unimplemented message grpc-go sends for path.
func (s *Server) unknownMessage(path string) string {
	sm := strings.TrimPrefix(path, "/")
	i := strings.LastIndexByte(sm, '/')
	if i < 0 {
		return fmt.Sprintf("malformed method name: %q", path)
	}
	if _, ok := s.info[sm[:i]]; ok {
		return fmt.Sprintf("unknown method %v for service %v", sm[i+1:], sm[:i])
	}
	return fmt.Sprintf("unknown service %v", sm[:i])
}

// validContentType reports whether ct is a gRPC content type this server
// decodes: application/grpc, or application/grpc+proto, optionally with
// parameters (grpcutil.ContentSubtype's rules, protobuf only).
func validContentType(ct string) bool {
	const base = "application/grpc"
	if len(ct) < len(base) || !strings.EqualFold(ct[:len(base)], base) {
		return false
	}
	rest := ct[len(base):]
	if rest == "" || rest[0] == ';' {
		return true
	}
	if rest[0] != '+' {
		return false
	}
	sub := rest[1:]
	if i := strings.IndexByte(sub, ';'); i >= 0 {
		sub = sub[:i]
	}
	return strings.EqualFold(sub, "proto")
}

var _ http.Handler = (*Server)(nil)
