package celerisotel_test

import (
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	xws "golang.org/x/net/websocket"

	celerisotel "github.com/celeris-dev/celeris/otel"
	"github.com/celeris-dev/celeris/websocket"
)

// The upgrade span over a real WebSocket client: a child of the server span
// under Middleware, ended at the handshake (the connection still works after),
// refused handshakes in error; without Middleware, a server span that
// continues the request's trace.
func TestWebSocketUpgradeSpan(t *testing.T) {
	tm := newTelemetry(t)
	tp := celerisotel.WithTracerProvider(tm.tp)
	s := newServer()
	s.Use(celerisotel.Middleware(tp, celerisotel.WithMeterProvider(tm.mp)))
	echo := websocket.Handler(&websocket.Config{Subprotocols: []string{"chat"}}, func(c *websocket.Conn) {
		for {
			mt, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if err := c.WriteMessage(mt, msg); err != nil {
				return
			}
		}
	})
	s.GET("/ws", celerisotel.WebSocket(echo, tp))
	bare := newServer()
	bare.GET("/ws", celerisotel.WebSocket(echo, tp))
	addr, bareAddr := start(t, s), start(t, bare)

	cfg, err := xws.NewConfig("ws://"+addr+"/ws", "http://"+addr)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Protocol = []string{"chat"}
	conn, err := xws.DialConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	up := tm.waitSpan(t, celerisotel.WebSocketSpanName)
	srv := tm.waitSpan(t, "GET /ws")
	// The connection outlives both spans.
	if err := xws.Message.Send(conn, "hello"); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := xws.Message.Receive(conn, &got); err != nil || got != "hello" {
		t.Fatalf("echo %q, %v", got, err)
	}
	if up.Parent().SpanID() != srv.SpanContext().SpanID() || up.SpanKind() != trace.SpanKindInternal {
		t.Errorf("upgrade span: parent %v kind %v, want child of %v, internal", up.Parent().SpanID(), up.SpanKind(), srv.SpanContext().SpanID())
	}
	wantAttrs(t, "upgrade span", attrs(up.Attributes()), map[string]any{
		"http.route": "/ws", "http.request.method": "GET", "url.path": "/ws",
		"network.protocol.name": "websocket", "websocket.subprotocols.offered": "chat",
		"http.response.status_code": int64(101),
	})
	wantAttrs(t, "server span", attrs(srv.Attributes()), map[string]any{"http.response.status_code": int64(101)})
	if up.Status().Code != codes.Unset {
		t.Errorf("upgrade status %v", up.Status())
	}

	// Not a handshake: 426 (no Sec-WebSocket-Version), the upgrade span in error.
	tm.spans.Reset()
	resp, err := protos[0].client().Get("http://" + addr + "/ws")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired {
		t.Fatalf("status %d", resp.StatusCode)
	}
	up = tm.waitSpan(t, celerisotel.WebSocketSpanName)
	if up.Status().Code != codes.Error || attrs(up.Attributes())["http.response.status_code"] != int64(426) {
		t.Errorf("refused upgrade: status %v attributes %v", up.Status(), up.Attributes())
	}

	// Without Middleware: a server span continuing the request's trace.
	tm.spans.Reset()
	cfg, _ = xws.NewConfig("ws://"+bareAddr+"/ws", "http://"+bareAddr)
	cfg.Header = http.Header{"Traceparent": {traceparent}}
	conn2, err := xws.DialConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	conn2.Close()
	up = tm.waitSpan(t, celerisotel.WebSocketSpanName)
	if up.SpanKind() != trace.SpanKindServer || up.Parent().SpanID().String() != remoteSpan {
		t.Errorf("bare upgrade span: kind %v parent %v", up.SpanKind(), up.Parent())
	}
}
