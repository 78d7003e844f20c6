package demo

import (
	_ "embed"
	"net/http"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/websocket"
)

// maxWSMessage bounds a WebSocket message on /ws/echo: large enough for the
// Autobahn test suite's 16 MiB messages (its section 9).
const maxWSMessage = 64 << 20

//go:embed index.html
var indexHTML string

// registerWeb installs GET / (a page whose script uses /ws/echo and /sse) and
// GET /ws/echo (every text or binary message echoed back).
func registerWeb(s *celeris.Server) {
	s.GET("/", func(c *celeris.Context) error {
		return c.HTML(http.StatusOK, indexHTML)
	})
	// Callbacks: an idle connection holds no goroutine, only its buffers.
	// permessage-deflate is accepted (browsers offer it), each message compressed
	// on its own: compressors come from a pool, so idle connections keep none.
	s.GET("/ws/echo", websocket.Events(&websocket.Config{MaxMessageSize: maxWSMessage, Compression: true}, websocket.Callbacks{
		OnMessage: func(c *websocket.Conn, t websocket.MessageType, msg []byte) error {
			return c.WriteMessage(t, msg)
		},
	})).ExtendedConnect() // WebSocket over HTTP/2 and HTTP/3 as well
}
