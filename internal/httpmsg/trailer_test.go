package httpmsg

import "testing"

func TestValidInformational(t *testing.T) {
	for status, want := range map[int]bool{99: false, 100: true, 101: false, 102: true, 103: true, 199: true, 200: false} {
		if ValidInformational(status) != want {
			t.Errorf("ValidInformational(%d) != %v", status, want)
		}
	}
}
