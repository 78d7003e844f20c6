package procstat

import (
	"os"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	line := "4242 (odd) name (x)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 " +
		"1234 56 0 0 20 0 9 0 100 1000000 200 18446744073709551615\n"
	got, err := parseStat([]byte(line))
	if err != nil || got != 1290 {
		t.Fatalf("parseStat = %d, %v; want 1290", got, err)
	}
	if _, err := parseStat([]byte("1 (x) S 1 2")); err != ErrFormat {
		t.Fatalf("short line: err = %v, want ErrFormat", err)
	}
}

func TestOwnCPU(t *testing.T) {
	// Burn 100 ms of CPU (not of wall time: the machine may be busy), so
	// the 10 ms ticks of /proc/PID/stat must show some.
	start, deadline := SelfCPU(), time.Now().Add(10*time.Second)
	for SelfCPU()-start < 100*time.Millisecond && time.Now().Before(deadline) {
	}
	if d, err := ProcessCPU(os.Getpid()); err != nil || d <= 0 {
		t.Fatalf("ProcessCPU(self) = %v, %v", d, err)
	}
	if SelfCPU() <= 0 {
		t.Fatal("SelfCPU() = 0 after a busy loop")
	}
}

func TestParseSystemBusy(t *testing.T) {
	in := "cpu  100 2 30 5000 7 1 4 3 9 0\ncpu0 50 1 15 2500 3 0 2 1 0 0\n"
	got, err := parseSystemBusy([]byte(in))
	if err != nil || got != 135 {
		t.Fatalf("parseSystemBusy = %d, %v; want 135", got, err)
	}
	if _, err := parseSystemBusy([]byte("intr 1 2 3")); err != ErrFormat {
		t.Fatalf("err = %v, want ErrFormat", err)
	}
	if d, err := SystemBusy(); err != nil || d <= 0 {
		t.Fatalf("SystemBusy() = %v, %v", d, err)
	}
}

func TestRSS(t *testing.T) {
	got, err := parseRSS([]byte("Name:\tx\nVmHWM:\t   999 kB\nVmRSS:\t  2048 kB\nRssAnon:\t 1 kB\n"))
	if err != nil || got != 2048<<10 {
		t.Fatalf("parseRSS = %d, %v", got, err)
	}
	if _, err := parseRSS([]byte("Name:\tx\n")); err != ErrFormat {
		t.Fatalf("no VmRSS: %v", err)
	}
	if n, err := RSS(os.Getpid()); err != nil || n < 1<<20 {
		t.Fatalf("RSS(self) = %d, %v", n, err)
	}
}
