package conncore

import (
	"testing"
	"time"
)

func TestSettingsWithDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Settings
		want Settings
	}{
		{name: "zero: every default", in: Settings{},
			want: Settings{ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 60 * time.Second, MaxBufferedInput: 512 << 10, PeekWindow: 128 << 10}},
		{name: "set values stay", in: Settings{ReadHeaderTimeout: time.Second, IdleTimeout: 2 * time.Second, MaxBufferedInput: 1 << 20, PeekWindow: 64 << 10},
			want: Settings{ReadHeaderTimeout: time.Second, IdleTimeout: 2 * time.Second, MaxBufferedInput: 1 << 20, PeekWindow: 64 << 10}},
		{name: "the input bound holds a whole window", in: Settings{MaxBufferedInput: 64 << 10, PeekWindow: 1 << 20},
			want: Settings{ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 60 * time.Second, MaxBufferedInput: 1 << 20, PeekWindow: 1 << 20}},
		{name: "negative means default", in: Settings{ReadHeaderTimeout: -1, MaxBufferedInput: -1},
			want: Settings{ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 60 * time.Second, MaxBufferedInput: 512 << 10, PeekWindow: 128 << 10}},
	} {
		got := tc.in.WithDefaults()
		if got.Logger == nil {
			t.Errorf("%s: no logger", tc.name)
		}
		got.Logger = nil
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
