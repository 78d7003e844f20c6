package celerisotel_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
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
	s.GET("/ws", celerisotel.WebSocket(echo, tp)).ExtendedConnect()
	bare := newServer()
	bare.GET("/ws", celerisotel.WebSocket(echo, tp)).ExtendedConnect()
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

// The upgrade span of a WebSocket over HTTP/2 (RFC 8441 extended CONNECT,
// h2c prior knowledge): status 200, the server span's protocol version 2.
// The handler serves the tunnel until it closes, so the spans end then.
func TestWebSocketUpgradeSpanH2(t *testing.T) {
	tm := newTelemetry(t)
	tp := celerisotel.WithTracerProvider(tm.tp)
	s := newServer()
	s.Use(celerisotel.Middleware(tp, celerisotel.WithMeterProvider(tm.mp)))
	s.GET("/ws", celerisotel.WebSocket(websocket.Handler(nil, func(c *websocket.Conn) {
		_, _, _ = c.ReadMessage()
	}), tp)).ExtendedConnect()
	addr := start(t, s)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(nc, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(nc, nc)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	// RFC 8441 §3: the client waits for SETTINGS_ENABLE_CONNECT_PROTOCOL.
	f, err := fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	enabled := false
	if sf, ok := f.(*http2.SettingsFrame); ok {
		v, ok := sf.Value(0x8)
		enabled = ok && v == 1
	}
	if !enabled {
		t.Fatalf("first frame %v, want SETTINGS with ENABLE_CONNECT_PROTOCOL", f)
	}
	_ = fr.WriteSettingsAck()
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, kv := range [][2]string{{":method", "CONNECT"}, {":protocol", "websocket"}, {":scheme", "http"},
		{":path", "/ws"}, {":authority", addr}, {"sec-websocket-version", "13"}, {"traceparent", traceparent}} {
		_ = enc.WriteField(hpack.HeaderField{Name: kv[0], Value: kv[1]})
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	dec := hpack.NewDecoder(4096, nil)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if h, ok := f.(*http2.HeadersFrame); ok && h.StreamID == 1 {
			fields, err := dec.DecodeFull(h.HeaderBlockFragment())
			if err != nil {
				t.Fatal(err)
			}
			if len(fields) == 0 || fields[0].Name != ":status" || fields[0].Value != "200" {
				t.Fatalf("answer %v, want :status 200", fields)
			}
			break
		}
	}
	time.Sleep(50 * time.Millisecond)
	for _, sp := range tm.spans.Ended() {
		t.Errorf("span %q ended while the tunnel is open", sp.Name())
	}
	// The client ends its side of the stream: the tunnel closes.
	if err := fr.WriteData(1, true, nil); err != nil {
		t.Fatal(err)
	}
	up := tm.waitSpan(t, celerisotel.WebSocketSpanName)
	srv := tm.waitSpan(t, "CONNECT /ws")
	wantAttrs(t, "h2 upgrade span", attrs(up.Attributes()), map[string]any{
		"http.response.status_code": int64(200), "http.request.method": "CONNECT", "network.protocol.name": "websocket",
	})
	wantAttrs(t, "h2 server span", attrs(srv.Attributes()), map[string]any{
		"network.protocol.version": "2", "http.response.status_code": int64(200),
	})
	if up.Parent().SpanID() != srv.SpanContext().SpanID() || srv.Parent().SpanID().String() != remoteSpan {
		t.Errorf("parents: upgrade %v (server span %v), server %v", up.Parent().SpanID(), srv.SpanContext().SpanID(), srv.Parent())
	}
}
