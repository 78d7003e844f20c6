package main

import (
	"net/http"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/demo"
	"github.com/celeris-dev/celeris/openapi"
)

func init() { demo.Extend(describe) }

// Message is the body of GET /json.
type Message struct {
	Message string `json:"message" example:"Hello, World!"`
}

// The inputs of the demo's routes that take query parameters, as the routes
// check them (they parse the query themselves; these types only describe it).
type (
	downloadIn struct {
		Size int `query:"size" validate:"required,min=0,max=67108864" doc:"bytes to send, up to 64 MiB"`
	}
	slowIn struct {
		MS int `query:"ms" validate:"required,min=0,max=10000" doc:"milliseconds to wait, up to 10000"`
	}
	streamIn struct {
		N int `query:"n" validate:"required,min=0,max=65536" doc:"1 KiB chunks to send, each flushed"`
	}
	postIn struct {
		ID     string `param:"id"`
		PostID string `param:"postId"`
	}
)

// describe serves the demo's OpenAPI description at /openapi.json (and
// /openapi.yaml) and a docs page for it at /docs, every route of
// internal/demo described by method and path.
func describe(s *celeris.Server) {
	api := openapi.New(s, openapi.Info{
		Title:       "Celeris demo",
		Version:     "1.0.0",
		Description: "The routes of the Celeris demo server (cmd/demo). Every response carries X-Request-ID.",
		License:     &openapi.License{Name: "MIT", Identifier: "MIT"},
	})
	text := func(desc string) openapi.Option { return openapi.Returns(http.StatusOK, "text/plain", desc, nil) }
	bytesOut := func(desc string) openapi.Option {
		return openapi.Returns(http.StatusOK, "application/octet-stream", desc, nil)
	}
	api.Describe("GET", "/bench", openapi.Summary("Plain text OK (the benchmark route)"), openapi.Tags("bench"),
		text("`OK`"))
	api.Describe("GET", "/json", openapi.Summary("A JSON message, encoded per request"), openapi.Tags("bench"),
		openapi.Description("Compressed when Accept-Encoding asks; CORS preflights are answered."),
		openapi.Returns(http.StatusOK, "application/json", "The message.", Message{}))
	api.Describe("GET", "/users/:id/posts/:postId", openapi.Summary("Echo two path parameters"), openapi.Tags("bench"),
		openapi.InputOf[postIn](), text("`user=<id> post=<postId>`"))
	api.Describe("POST", "/upload", openapi.Summary("Count the bytes of the body"), openapi.Tags("io"),
		openapi.Body("application/octet-stream", "Any bytes; streamed, never buffered whole.", nil, false),
		text("The body's length in bytes."))
	api.Describe("GET", "/download", openapi.Summary("N bytes, streamed with Content-Length"), openapi.Tags("io"),
		openapi.InputOf[downloadIn](), bytesOut("`size` zero bytes."))
	api.Describe("GET", "/slow", openapi.Summary("Answer after a delay"), openapi.Tags("io"),
		openapi.Description("Returns at once when the client leaves (the handler watches the request's context)."),
		openapi.InputOf[slowIn](), text("`OK` after the wait."), openapi.Errors(http.StatusServiceUnavailable))
	api.Describe("GET", "/panic", openapi.Summary("A handler that panics"), openapi.Tags("errors"),
		openapi.Errors(http.StatusInternalServerError))
	api.Describe("GET", "/nethttp/hello", openapi.Summary("A net/http handler mounted through Adapt"), openapi.Tags("adapters"),
		text("`hello from net/http`"))
	api.Describe("GET", "/sse", openapi.Summary("Five server-sent events, 100 ms apart"), openapi.Tags("streams"),
		openapi.Returns(http.StatusOK, "text/event-stream", "Events `tick` with ids 1 to 5.", nil))
	api.Describe("GET", "/stream", openapi.Summary("N chunks of 1 KiB, each flushed"), openapi.Tags("streams"),
		openapi.InputOf[streamIn](), bytesOut("The chunks."))
	api.Describe("GET", "/metrics", openapi.Summary("Prometheus metrics"), openapi.Tags("operations"),
		openapi.Returns(http.StatusOK, "text/plain", "Prometheus text exposition format.", nil))
	api.Describe("GET", "/ws/echo", openapi.Summary("WebSocket echo"), openapi.Tags("streams"),
		openapi.Description("Every text or binary message is echoed back; over HTTP/1.1 (RFC 6455 upgrade) and HTTP/2 (RFC 8441 extended CONNECT)."),
		openapi.Returns(http.StatusSwitchingProtocols, "", "Switched to the WebSocket protocol.", nil),
		openapi.Errors(http.StatusBadRequest))
	api.Describe("GET", "/", openapi.Summary("A page whose script uses /ws/echo and /sse"), openapi.Tags("web"),
		openapi.Returns(http.StatusOK, "text/html", "The page.", nil))
	api.ServeJSON(s, "/openapi.json")
	api.ServeYAML(s, "/openapi.yaml")
	api.ServeDocs(s, "/docs", "/openapi.json")
}
