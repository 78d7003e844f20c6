package httpmsg

import "testing"

func TestForbiddenTrailer(t *testing.T) {
	for _, name := range []string{"Content-Length", "transfer-encoding", "HOST", "Authorization", "Set-Cookie",
		"Content-Type", "Cache-Control", "If-None-Match", "Trailer", "TE", ":status", "Connection", ""} {
		if !ForbiddenTrailer(name) {
			t.Errorf("%q allowed as a trailer", name)
		}
	}
	for _, name := range []string{"Grpc-Status", "grpc-message", "X-Checksum", "Server-Timing", "Digest", "If"} {
		if ForbiddenTrailer(name) {
			t.Errorf("%q refused as a trailer", name)
		}
	}
}

func TestValidInformational(t *testing.T) {
	for status, want := range map[int]bool{99: false, 100: true, 101: false, 102: true, 103: true, 199: true, 200: false} {
		if ValidInformational(status) != want {
			t.Errorf("ValidInformational(%d) != %v", status, want)
		}
	}
}
