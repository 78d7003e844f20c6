package celerish3

import (
	"context"
	"testing"
	"time"
)

// TestClientResetCancels: a client that resets its side of a request stream
// (RESET_STREAM, without STOP_SENDING) cancels the request's context while
// the handler is not reading the body (RFC 9114 §4.1.1); a request whose
// stream ends cleanly (FIN) keeps its context.
func TestClientResetCancels(t *testing.T) {
	addr := wireServer(t, Config{})
	c := dialRaw(t, addr)
	c.control()
	get := func(q string) []byte {
		return frameBytes(frameHeaders, block(":method", "GET", ":scheme", "https", ":path", "/wait?"+q, ":authority", "localhost"))
	}
	post := func(q string) []byte {
		return frameBytes(frameHeaders, block(":method", "POST", ":scheme", "https", ":path", "/wait?"+q, ":authority", "localhost"))
	}
	for _, tc := range []struct {
		name   string
		send   []byte
		reset  bool // RESET_STREAM, else FIN
		cancel bool // the handler's context must end
	}{
		{"GET headers then reset", get("ms=5000&a"), true, true},
		{"POST partial body then reset", append(post("ms=5000&b"), frameBytes(frameData, []byte("part"))...), true, true},
		// A handler streaming its response to a client that reset its side.
		{"GET stream then reset", frameBytes(frameHeaders, block(":method", "GET", ":scheme", "https", ":path", "/stream", ":authority", "localhost")), true, true},
		{"POST body then FIN", append(post("ms=400&c"), frameBytes(frameData, []byte("all"))...), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := c.qc.OpenStreamSync(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Write(tc.send); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond) // the handler runs
			if tc.reset {
				s.CancelWrite(0x10c) // H3_REQUEST_CANCELLED; the read side stays open
			} else {
				_ = s.Close()
			}
			select {
			case q := <-waitCancelled:
				if !tc.cancel {
					t.Fatalf("context of %q cancelled", q)
				}
			case <-time.After(time.Second):
				if tc.cancel {
					t.Fatal("the handler's context did not end within a second")
				}
			}
			if tc.reset {
				// The server abandons the response: H3_REQUEST_CANCELLED.
				_ = s.SetReadDeadline(time.Now().Add(2 * time.Second))
				var b [64]byte
				for {
					if _, err = s.Read(b[:]); err != nil {
						break
					}
				}
				if streamCode(err) != ErrCodeRequestCancelled {
					t.Fatalf("response ended with %v", err)
				}
			}
		})
	}
	// The connection goes on serving.
	if resp, err := c.request(getHeaders, true); err != nil || status(t, resp) != "200" {
		t.Fatalf("after resets: %q %v", resp, err)
	}
}
