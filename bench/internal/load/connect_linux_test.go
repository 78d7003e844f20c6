package load

import (
	"errors"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestConnectFD covers both ways connect(2) can leave a connection in
// progress: a non-blocking socket (EINPROGRESS) takes the same wait as a
// blocking one interrupted by a signal (EINTR), which a test cannot time.
func TestConnectFD(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	open := ln.Addr().(*net.TCPAddr).Port
	closedLn, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := closedLn.Addr().(*net.TCPAddr).Port
	closedLn.Close()
	defer ln.Close()

	for _, tc := range []struct {
		name     string
		port     int
		nonblock bool
		want     error
	}{
		{"blocking/listening", open, false, nil},
		{"blocking/refused", closed, false, unix.ECONNREFUSED},
		{"in-progress/listening", open, true, nil},
		{"in-progress/refused", closed, true, unix.ECONNREFUSED},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flags := unix.SOCK_STREAM | unix.SOCK_CLOEXEC
			if tc.nonblock {
				flags |= unix.SOCK_NONBLOCK
			}
			fd, err := unix.Socket(unix.AF_INET, flags, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			sa := &unix.SockaddrInet4{Port: tc.port, Addr: [4]byte{127, 0, 0, 1}}
			err = connectFD(fd, sa, time.Second)
			if !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
				t.Fatalf("connectFD = %v, want %v", err, tc.want)
			}
			if tc.want == nil {
				if _, err := unix.Getpeername(fd); err != nil {
					t.Fatalf("connected, but getpeername: %v", err)
				}
			}
		})
	}
}
