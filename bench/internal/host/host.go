// Package host holds what the bench commands need of the machine they run on:
// a free loopback address and taskset CPU lists.
package host

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// FreeAddr returns a loopback address with a port free a moment ago.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// CPUSet parses a taskset CPU list like "0,2-3".
func CPUSet(list string) (map[int]bool, error) {
	set := map[int]bool{}
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("CPU list %q: %v", list, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("CPU list %q: %v", list, err)
			}
		}
		if a < 0 || b < a {
			return nil, errors.New("CPU list " + strconv.Quote(list) + ": bad range " + strconv.Quote(part))
		}
		for i := a; i <= b; i++ {
			set[i] = true
		}
	}
	return set, nil
}

// CountCPUs counts the CPUs of a taskset list like "0,2-3".
func CountCPUs(list string) (int, error) {
	set, err := CPUSet(list)
	return len(set), err
}

// Overlap reports whether two CPU lists share a CPU (false when either does not parse).
func Overlap(a, b string) bool {
	sa, err1 := CPUSet(a)
	sb, err2 := CPUSet(b)
	if err1 != nil || err2 != nil {
		return false
	}
	for c := range sa {
		if sb[c] {
			return true
		}
	}
	return false
}
