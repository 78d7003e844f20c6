//go:build !unix

package stdengine

import "syscall"

// writeNow is the inline write of unix systems; elsewhere every batch goes to
// the writer goroutine.
func (c *conn) writeNow([]byte) int { return 0 }

func (c *conn) writeFd(uintptr) bool { return true }

func rawConnOf(any) syscall.RawConn { return nil }
