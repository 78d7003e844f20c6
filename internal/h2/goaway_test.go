package h2

import (
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// TestDrainTwoStepGoAway: Drain sends GOAWAY with the largest stream id and a
// PING (RFC 9113 §6.8); a stream the client opens before the PING's ACK is
// served, and the ACK brings the final GOAWAY naming it; a stream after that
// is ignored. Without the ACK the final GOAWAY comes after goAwayWait.
func TestDrainTwoStepGoAway(t *testing.T) {
	ok := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		_ = w.WriteResponse(200, nil, []byte("ok"))
	}}
	expectGoAway := func(hs *harness, last uint32) {
		t.Helper()
		for {
			f, more := hs.next(3 * time.Second)
			if !more {
				t.Fatalf("no GOAWAY last=%d", last)
			}
			if f.Type == frame.TypeGoAway {
				if f.LastStreamID != last || f.ErrCode != frame.ErrCodeNo {
					t.Fatalf("GOAWAY %+v, want NO_ERROR last=%d", f, last)
				}
				return
			}
		}
	}

	t.Run("ack", func(t *testing.T) {
		hs := newHarness(t, ok, nil)
		hs.handshake()
		hs.send(frame.AppendHeaders(nil, 1, true, true, hs.get("/")))
		if r := hs.response(1); r.status != "200" {
			t.Fatal(r)
		}
		hs.c.Drain()
		expectGoAway(hs, 1<<31-1)
		ping := hs.expect(frame.TypePing, 0)
		if ping.IsAck() || ping.PingData() != goAwayPingData {
			t.Fatalf("want Drain's PING, got %+v", ping)
		}
		// In flight when the first GOAWAY left: served.
		hs.send(frame.AppendHeaders(nil, 3, true, true, hs.get("/")))
		if r := hs.response(3); r.status != "200" || string(r.body) != "ok" {
			t.Fatalf("stream 3 after the first GOAWAY: %+v", r)
		}
		hs.send(frame.AppendPing(nil, true, goAwayPingData))
		expectGoAway(hs, 3)
		hs.send(frame.AppendHeaders(nil, 5, true, true, hs.get("/")))
		if f, more := hs.next(200 * time.Millisecond); more && f.StreamID == 5 {
			t.Fatalf("stream 5 after the final GOAWAY was answered: %+v", f)
		}
	})

	t.Run("no ack", func(t *testing.T) {
		hs := newHarness(t, ok, nil)
		hs.handshake()
		hs.send(frame.AppendHeaders(nil, 1, true, true, hs.get("/")))
		hs.response(1)
		start := time.Now()
		hs.c.Drain()
		expectGoAway(hs, 1<<31-1)
		expectGoAway(hs, 1)
		if d := time.Since(start); d < goAwayWait {
			t.Fatalf("final GOAWAY after %v without the ACK, want %v", d, goAwayWait)
		}
	})
}
