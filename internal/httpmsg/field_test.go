package httpmsg

import "testing"

func TestValidResponseField(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		want        bool
	}{
		{name: "X-Ok", value: "fine\tvalue", want: true},
		{name: "x!#$%&'*+-.^_`|~9", value: "", want: true},
		{name: "", value: "v", want: false},
		{name: "Bad Name", value: "v", want: false},
		{name: "X:y", value: "v", want: false},
		{name: "X", value: "a\r\nInjected: 1", want: false},
		{name: "X", value: "a\nb", want: false},
		{name: "X", value: "a\x00b", want: false},
	} {
		if got := ValidResponseField(tt.name, tt.value); got != tt.want {
			t.Errorf("ValidResponseField(%q, %q) = %v", tt.name, tt.value, got)
		}
	}
}
