package h2

import (
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// TestShutdownResetsDrainingStreams: after GOAWAY, streams whose response is
// complete but whose client has not ended its request body (half-closed local,
// draining) are reset with NO_ERROR (RFC 9113 §8.1) and the connection closes:
// they cannot hold graceful shutdown open. Whether shutdown begins before or after
// the response ends.
func TestShutdownResetsDrainingStreams(t *testing.T) {
	for _, tc := range []struct {
		name          string
		shutdownFirst bool
	}{
		{name: "shutdown after the response"},
		{name: "shutdown during the handler", shutdownFirst: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			h := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
				<-release
				_ = w.WriteResponse(200, nil, []byte("done"))
			}}
			hs := newHarness(t, h, nil)
			hs.handshake()
			hs.send(frame.AppendHeaders(nil, 1, false, true, hs.get("/"))) // the body stays open
			testkit.Wait(t, "the handler", func() bool { return hs.c.handlers != 0 })
			if tc.shutdownFirst {
				hs.c.Shutdown()
				if f := hs.expect(frame.TypeGoAway, 0); f.LastStreamID != 1 || f.ErrCode != frame.ErrCodeNo {
					t.Fatalf("%+v", f)
				}
			}
			close(release)
			if r := hs.response(1); string(r.body) != "done" {
				t.Fatal(r)
			}
			for hs.c.handlers > 0 {
				hs.next(10 * time.Millisecond)
			}
			if !tc.shutdownFirst {
				if hs.fc.closed {
					t.Fatal("closed before shutdown")
				}
				hs.c.Shutdown()
				hs.expect(frame.TypeGoAway, 0)
			}
			hs.expectRST(1, frame.ErrCodeNo)
			if !hs.fc.closed {
				t.Fatal("not closed once only draining streams remained")
			}
		})
	}
}
