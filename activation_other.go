//go:build !unix

package celeris

// inheritSupported: no socket is inherited by descriptor number here (Windows
// hands sockets over differently); Start listens on its addresses.
const inheritSupported = false

func closeOnExec(int) {}

func socketStream(int) (stream, ok bool) { return false, false }
