// Package procstat reads CPU time: a server process's from /proc/PID/stat
// (so the suite can report requests per server CPU-second) and the load
// generator's own from getrusage (so it can warn when it saturates its cores).
package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// ClockTicks is USER_HZ, the unit of /proc/PID/stat times. It is 100 on
// every Linux architecture Go supports (sysconf needs cgo, so it is fixed).
const ClockTicks = 100

// ErrFormat means /proc/PID/stat did not look as expected.
var ErrFormat = errors.New("procstat: unexpected /proc/PID/stat format")

// ProcessCPU returns the user+system CPU time of process pid, all threads
// included (dead ones too: Linux sums them into the process).
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	ticks, err := parseStat(b)
	if err != nil {
		return 0, err
	}
	return time.Duration(ticks) * time.Second / ClockTicks, nil
}

// parseStat returns utime+stime (fields 14 and 15, proc(5)) in clock ticks.
// The command name (field 2) may hold spaces and parentheses, so fields are
// counted after its last ')'.
func parseStat(b []byte) (uint64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, ErrFormat
	}
	fields := bytes.Fields(b[i+1:])
	// fields[0] is field 3 (state); utime is field 14, stime field 15.
	if len(fields) < 13 {
		return 0, ErrFormat
	}
	utime, err1 := strconv.ParseUint(string(fields[11]), 10, 64)
	stime, err2 := strconv.ParseUint(string(fields[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, ErrFormat
	}
	return utime + stime, nil
}

// SelfCPU returns this process's user+system CPU time.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// SystemBusy returns the CPU time all CPUs spent busy since boot (from the
// "cpu" line of /proc/stat). Subtracting the
// server's and the loader's share over a window tells how much the rest of
// the machine ran: a noisy neighbour makes results unreliable.
func SystemBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	ticks, err := parseSystemBusy(b)
	if err != nil {
		return 0, err
	}
	return time.Duration(ticks) * time.Second / ClockTicks, nil
}

// parseSystemBusy sums user, nice, system and steal (guest time is already
// inside user and nice). irq and softirq are left out: with
// CONFIG_IRQ_TIME_ACCOUNTING they are charged to no process, so loopback
// packet processing would look like a neighbour; the gauge errs low instead.
func parseSystemBusy(b []byte) (uint64, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	fields := bytes.Fields(line)
	if len(fields) < 9 || string(fields[0]) != "cpu" {
		return 0, ErrFormat
	}
	var sum uint64
	for _, i := range []int{1, 2, 3, 8} { // user nice system steal
		v, err := strconv.ParseUint(string(fields[i]), 10, 64)
		if err != nil {
			return 0, ErrFormat
		}
		sum += v
	}
	return sum, nil
}

// RSS returns the resident set size of process pid in bytes (VmRSS in
// /proc/PID/status).
func RSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseRSS(b)
}

// parseRSS finds "VmRSS:  123 kB" in a /proc/PID/status.
func parseRSS(b []byte) (int64, error) {
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte("\n"))
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, ErrFormat
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, ErrFormat
		}
		return kb << 10, nil
	}
	return 0, ErrFormat
}
