package celerisotel

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.38.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/celeris-dev/celeris"
)

// WebSocketSpanName is the name of the span WebSocket makes.
const WebSocketSpanName = "WebSocket upgrade"

// WebSocket wraps a WebSocket route handler (websocket.Handler,
// websocket.Events, or a handler that calls websocket.Upgrade) in a span for
// the upgrade: it starts before the handshake is checked and ends when the
// handler returns. On HTTP/1.1 that is once the 101 is queued: the
// connection then lives on without the span. On HTTP/2 (extended CONNECT,
// RFC 8441) the handler's goroutine serves the tunnel until it closes, so
// this span, and the request's server span, last as long as the WebSocket
// (status 200). Under
// Middleware it is a child (kind internal) of the request's server span;
// without it, it is the server span itself (kind server), continuing the
// trace the request's headers carry.
//
// The span records http.route, http.request.method, url.path,
// network.protocol.name "websocket", the subprotocols the client offered
// (websocket.subprotocols.offered, as sent) and http.response.status_code;
// a refused handshake (400, 403, 426: the handler's error) sets the span's
// status to Error with the error's text.
//
// The connection's own context (websocket.Conn.Context) is not derived from
// the request's. A handler that wants the connection's work in the same
// trace keeps the span context before it upgrades:
//
//	s.GET("/ws", celerisotel.WebSocket(func(c *celeris.Context) error {
//		sc := trace.SpanContextFromContext(c.Context())
//		return websocket.Upgrade(c, nil, func(conn *websocket.Conn) {
//			ctx := trace.ContextWithSpanContext(conn.Context(), sc)
//			// spans started from ctx join the upgrade's trace
//		})
//	}))
//
// A route built with WebSocket serves WebSocket over HTTP/2 and HTTP/3 (RFC
// 8441, RFC 9220) once marked with celeris.Route.ExtendedConnect, as any
// WebSocket route.
func WebSocket(next celeris.HandlerFunc, opts ...Option) celeris.HandlerFunc {
	cfg := newConfig(opts)
	tracer := cfg.TracerProvider.Tracer(scopeName, trace.WithSchemaURL(semconv.SchemaURL))
	prop := cfg.Propagators
	return func(c *celeris.Context) error {
		ctx := c.Context()
		kind := trace.SpanKindInternal
		if !trace.SpanContextFromContext(ctx).IsValid() {
			ctx = prop.Extract(ctx, carrier{c})
			kind = trace.SpanKindServer
		}
		ctx, span := tracer.Start(ctx, WebSocketSpanName, trace.WithSpanKind(kind))
		prev := c.Context()
		c.SetContext(ctx)
		if span.IsRecording() {
			m, known := method(c.Method())
			span.SetAttributes(
				semconv.HTTPRequestMethodKey.String(m),
				semconv.URLPathKey.String(c.Clone(c.Path())),
				semconv.NetworkProtocolNameKey.String("websocket"))
			if !known {
				span.SetAttributes(semconv.HTTPRequestMethodOriginalKey.String(c.Clone(c.Method())))
			}
			if r := c.RoutePattern(); r != "" {
				span.SetAttributes(semconv.HTTPRouteKey.String(r))
			}
			if p := c.Header("Sec-WebSocket-Protocol"); p != "" {
				span.SetAttributes(offeredKey.String(c.Clone(p)))
			}
		}
		err := next(c)
		status := c.ResultStatus(err)
		if span.IsRecording() {
			span.SetAttributes(semconv.HTTPResponseStatusCodeKey.Int(status))
			if err != nil || status >= 400 {
				desc := ""
				if err != nil {
					desc = err.Error()
				}
				span.SetStatus(codes.Error, desc)
			}
		}
		span.End()
		c.SetContext(prev)
		return err
	}
}

// offeredKey is the attribute of the subprotocols a client offered
// (Sec-WebSocket-Protocol, RFC 6455 §4.1); the semantic conventions name none.
const offeredKey = attribute.Key("websocket.subprotocols.offered")
