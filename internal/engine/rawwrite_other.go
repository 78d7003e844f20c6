//go:build !linux && (darwin || dragonfly || freebsd || netbsd || openbsd)

package engine

// rawWrite is Linux only: elsewhere gnet writes everything.
func rawWrite(int, []byte) (int, bool) { return 0, false }
