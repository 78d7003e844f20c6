//go:build unix

package enginetest

import "golang.org/x/sys/unix"

// fdLimit is the process's descriptor limit (RLIMIT_NOFILE, soft).
func fdLimit() (uint64, bool) {
	var r unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &r) != nil {
		return 0, false
	}
	return r.Cur, true
}
