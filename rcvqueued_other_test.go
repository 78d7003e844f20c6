//go:build !linux

package celeris

import "net"

// rcvQueued cannot tell here: -1.
func rcvQueued(*net.TCPConn) int { return -1 }
