package bytesconv

import (
	"net/http"
	"testing"
	"time"
)

func TestParseUint(t *testing.T) {
	tests := []struct {
		in   string
		max  uint64
		want uint64
		ok   bool
	}{
		{in: "0", max: 10, want: 0, ok: true},
		{in: "123", max: 1000, want: 123, ok: true},
		{in: "1001", max: 1000, ok: false},
		{in: "", max: 10, ok: false},
		{in: "-1", max: 10, ok: false},
		{in: "12a", max: 1000, ok: false},
		{in: "18446744073709551615", max: 1<<64 - 1, want: 1<<64 - 1, ok: true},
		{in: "18446744073709551616", max: 1<<64 - 1, ok: false},
	}
	for _, tt := range tests {
		got, ok := ParseUint([]byte(tt.in), tt.max)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("ParseUint(%q,%d) = %d,%v want %d,%v", tt.in, tt.max, got, ok, tt.want, tt.ok)
		}
	}
}

func TestDate(t *testing.T) {
	d, err := http.ParseTime(string(Date()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := time.Since(d); diff > 2*time.Second || diff < -2*time.Second {
		t.Fatalf("date %v is %v off", d, diff)
	}
}

func TestConversions(t *testing.T) {
	if B2S([]byte("abc")) != "abc" || string(S2B("xyz")) != "xyz" || B2S(nil) != "" || S2B("") != nil {
		t.Fatal("conversion mismatch")
	}
	if string(AppendUint(nil, 7)) != "7" || string(AppendUint(nil, 12345)) != "12345" || string(AppendHex(nil, 255)) != "ff" {
		t.Fatal("append mismatch")
	}
}
