//go:build !linux

package engine

// rawWrite is Linux only: elsewhere gnet writes everything.
func rawWrite(int, []byte) (int, bool) { return 0, false }
