package h2

import (
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// TestPrefaceTimeout: a client that sends the preface's magic, all of it or
// part, and no SETTINGS gets GOAWAY SETTINGS_TIMEOUT once SettingsTimeout
// passed (RFC 9113 §3.4, §6.5.3); one whose SETTINGS came in time is served
// past it. The sockets side is the root package's TestCVEPrefaceWithoutSettings.
func TestPrefaceTimeout(t *testing.T) {
	const timeout = 50 * time.Millisecond
	for _, sent := range []int{len(clientPreface), 10} {
		hs := newHarness(t, helloHandler(true), &Config{SettingsTimeout: timeout})
		start := time.Now()
		hs.send([]byte(clientPreface[:sent]))
		hs.expectGoAway(frame.ErrCodeSettingsTimeout)
		if took := time.Since(start); took < timeout {
			t.Fatalf("%d bytes: GOAWAY after %v, before the timeout", sent, took)
		}
	}
	hs := newHarness(t, helloHandler(true), &Config{SettingsTimeout: timeout})
	hs.send([]byte(clientPreface)) // arms the timer
	if hs.c.prefaceTimer == nil {
		t.Fatal("no preface timer while SETTINGS are due")
	}
	hs.send(frame.AppendSettings(nil)) // stops it
	hs.expect(frame.TypeSettings, 0)
	hs.expect(frame.TypeSettings, 0) // the ACK (WINDOW_UPDATE skipped)
	testkit.Window(2 * timeout)      // a sleep: the timeout passes with the preface complete, and nothing may fire
	hs.send(frame.AppendHeaders(nil, 1, true, true, hs.get("/")))
	if r := hs.response(1); r.status != "200" {
		t.Fatalf("status %q", r.status)
	}
	if hs.c.prefaceTimer != nil {
		t.Fatal("the preface timer still runs")
	}
}
