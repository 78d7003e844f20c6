package host

import (
	"net"
	"testing"
)

func TestCountCPUs(t *testing.T) {
	for _, tc := range []struct {
		list string
		n    int
		ok   bool
	}{
		{"0", 1, true},
		{"0-7", 8, true},
		{"0,2-3", 3, true},
		{"0,2-3,8", 4, true},
		{"1,1", 1, true},
		{"1-x", 0, false},
		{"0-3,2-5", 6, true}, // a CPU named twice counts once
		{"8-15", 8, true},
		{"", 0, false},
		{"a", 0, false},
		{"3-1", 0, false},
		{"-1", 0, false},
		{"0-", 0, false},
	} {
		n, err := CountCPUs(tc.list)
		if (err == nil) != tc.ok || n != tc.n {
			t.Errorf("CountCPUs(%q) = %d, %v; want %d, ok %v", tc.list, n, err, tc.n, tc.ok)
		}
	}
}

func TestOverlap(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"0", "1", false},
		{"0-7", "8-15", false},
		{"0-7", "7-15", true},
		{"0,2", "1,2", true},
		{"x", "0", false},
	} {
		if got := Overlap(tc.a, tc.b); got != tc.want {
			t.Errorf("Overlap(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

func TestFreeAddr(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the address %s is not free: %v", addr, err)
	}
	ln.Close()
}
