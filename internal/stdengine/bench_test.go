package stdengine

import (
	"io"
	"testing"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// BenchmarkRoundTrip measures the engine's per-request cost over a loopback
// socket: the client sends a small request, the protocol answers it from
// OnData, the client reads the answer. Client and server run in this process,
// so allocs/op counts both (the protocol allocates nothing; over TLS the
// client's crypto/tls does).
func BenchmarkRoundTrip(b *testing.B) {
	for _, m := range modeList() {
		b.Run(m.name, func(b *testing.B) {
			answer := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK")
			addr := start(b, m.cfg, func(c httpmsg.Conn) *proto {
				return &proto{c: c, closed: make(chan error, 1), data: func(p *proto, in []byte) (int, error) {
					p.c.Write(answer)
					return len(in), nil
				}}
			})
			c := dial(b, addr, m.tlsOn)
			req := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			got := make([]byte, len(answer))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Write(req); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c, got); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
