package celeris

import (
	"errors"
	"testing"
)

// TestInheritedTake: inherited sockets are matched to roles by name (the role,
// or tableflip's configured address), then in order among unnamed ones, and
// each is taken once; stream and datagram sockets never mix.
func TestInheritedTake(t *testing.T) {
	type sock struct {
		name   string
		stream bool
	}
	type want struct {
		role, addr string
		stream     bool
		got        int // index of the socket taken, -1 for none
	}
	for _, tc := range []struct {
		name  string
		socks []sock
		takes []want
	}{
		{
			name:  "systemd names win over order",
			socks: []sock{{"https", true}, {"http", true}, {"h3", false}},
			takes: []want{{roleHTTP, ":80", true, 1}, {roleHTTPS, ":443", true, 0}, {roleH3, ":443", false, 2}},
		},
		{
			name:  "unnamed in order",
			socks: []sock{{"", true}, {"", true}, {"", false}},
			takes: []want{{roleHTTP, ":80", true, 0}, {roleHTTPS, ":443", true, 1}, {roleH3, ":443", false, 2}},
		},
		{
			name:  "tableflip addresses",
			socks: []sock{{"127.0.0.1:8443", true}, {"127.0.0.1:8080", true}, {"127.0.0.1:8443", false}},
			takes: []want{{roleHTTP, "127.0.0.1:8080", true, 1}, {roleHTTPS, "127.0.0.1:8443", true, 0}, {roleH3, "127.0.0.1:8443", false, 2}},
		},
		{
			name:  "an address of another configuration is not taken",
			socks: []sock{{"127.0.0.1:9999", true}},
			takes: []want{{roleHTTP, "127.0.0.1:8080", true, -1}},
		},
		{
			name:  "a datagram socket does not serve a listener",
			socks: []sock{{"", false}},
			takes: []want{{roleHTTP, ":80", true, -1}, {roleH3, ":443", false, 0}},
		},
		{
			name:  "taken once",
			socks: []sock{{"http", true}},
			takes: []want{{roleHTTP, ":80", true, 0}, {roleHTTP, ":80", true, -1}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in inheritance
			for _, s := range tc.socks {
				in.sockets = append(in.sockets, &inheritedSocket{name: s.name, stream: s.stream})
			}
			for i, w := range tc.takes {
				before := make([]bool, len(in.sockets))
				for j, s := range in.sockets {
					before[j] = s.taken
				}
				in.take(w.role, w.addr, w.stream)
				got := -1
				for j, s := range in.sockets {
					if s.taken && !before[j] {
						got = j
					}
				}
				if got != w.got {
					t.Fatalf("take %d (%s %s): socket %d, want %d", i, w.role, w.addr, got, w.got)
				}
			}
		})
	}
}

// TestUpgradeNotServing: Upgrade of a server that does not serve fails at
// once, starting nothing.
func TestUpgradeNotServing(t *testing.T) {
	s := New(Config{Addr: "127.0.0.1:0"})
	if err := s.Upgrade(); inheritSupported && !errors.Is(err, ErrUpgradeNotServing) {
		t.Fatalf("Upgrade before Start: %v, want ErrUpgradeNotServing", err)
	}
}
