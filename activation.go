package celeris

import (
	"encoding/gob"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Inherited sockets
//
// A server started with sockets already open serves on them instead of
// listening on its addresses. Two protocols hand sockets to a process:
//
//   - systemd socket activation (sd_listen_fds(3)): LISTEN_PID is the process's
//     id, LISTEN_FDS the number of descriptors from 3 on, LISTEN_FDNAMES their
//     names separated by ':' (FileDescriptorName= in a .socket unit,
//     systemd-socket-activate --fdname). A socket named "http" serves
//     Config.Addr, "https" Config.TLSAddr (Config.Addr with StartTLS), "h3" the
//     HTTP/3 transport; unnamed sockets ("unknown", or no LISTEN_FDNAMES) are
//     taken in order: the first stream socket for the plaintext address, the
//     next for TLS, the first datagram socket for HTTP/3.
//   - cloudflare/tableflip's upgrade (Server.Upgrade speaks it, as parent and
//     child): TABLEFLIP_HAS_PARENT_7DIU3=yes, descriptor 3 the pipe on which the
//     child says it is ready, 4 the pipe that carries the gob-encoded names of
//     the descriptors from 5 on: {"listener", "tcp", ADDR} or {"packet", "udp",
//     ADDR}. A socket serves the address whose configured string is ADDR (so a
//     tableflip parent's Listen("tcp", ":8080") reaches Config.Addr ":8080"), or
//     the role named "http", "https" or "h3".
//
// The environment is read once per process, at the first Start, and its
// variables are removed, so that processes started later do not take the
// sockets for theirs. A socket no address takes stays open for another Server
// of the process.
//
// An inherited plaintext TCP socket is served by the default engine (epoll on
// Linux), or by EngineEpoll or EngineStd when Config.Engine names one; the
// gnet engine listens by address only, so with EngineGnet the std engine
// serves it (logged once).

// Socket roles: the names that match inherited sockets to a Server's addresses.
const (
	roleHTTP  = "http"  // Config.Addr, plaintext
	roleHTTPS = "https" // Config.TLSAddr, or Config.Addr with StartTLS
	roleH3    = "h3"    // the UDP socket of the HTTP/3 transport
)

// tableflip's protocol (github.com/cloudflare/tableflip v1.2.3, parent.go).
const (
	tableflipEnv    = "TABLEFLIP_HAS_PARENT_7DIU3"
	tableflipReady  = 42 // the byte the child writes once ready
	tableflipFirst  = 5  // the first passed socket
	tableflipListen = "listener"
	tableflipPacket = "packet"
)

// inheritedSocket is one socket handed to the process.
type inheritedSocket struct {
	name   string // "http", "https", "h3", an address (tableflip), or "" when unnamed
	stream bool   // SOCK_STREAM (a listener); else a datagram socket
	file   *os.File
	taken  bool
}

// inheritance is what the process was handed (read once, guarded by mu).
type inheritance struct {
	mu      sync.Mutex
	sockets []*inheritedSocket
	// parent is tableflip's ready pipe (descriptor 3), nil without a parent;
	// parentDone is the names pipe (descriptor 4), which reaches EOF when the
	// parent exits.
	parent, parentDone *os.File
	err                error
}

var (
	inheritOnce sync.Once
	inherited   inheritance
)

// inheritedSockets reads the environment once per process.
func inheritedSockets() *inheritance {
	inheritOnce.Do(func() {
		switch {
		case !inheritSupported:
		case os.Getenv(tableflipEnv) != "":
			inherited.err = inherited.readTableflip()
		default:
			inherited.err = inherited.readSystemd()
		}
	})
	return &inherited
}

// readSystemd takes the sockets of sd_listen_fds(3).
func (in *inheritance) readSystemd() error {
	pid, fds := os.Getenv("LISTEN_PID"), os.Getenv("LISTEN_FDS")
	names := os.Getenv("LISTEN_FDNAMES")
	if fds == "" {
		return nil
	}
	os.Unsetenv("LISTEN_PID")
	os.Unsetenv("LISTEN_FDS")
	os.Unsetenv("LISTEN_FDNAMES")
	if pid != strconv.Itoa(os.Getpid()) {
		return nil // meant for another process (a parent that did not unset them)
	}
	n, err := strconv.Atoi(fds)
	if err != nil || n < 0 || n > 1024 {
		return fmt.Errorf("celeris: LISTEN_FDS=%q is not a count of descriptors", fds)
	}
	var nameList []string
	if names != "" {
		nameList = strings.Split(names, ":")
	}
	for i := range n {
		name := ""
		if i < len(nameList) && nameList[i] != "unknown" {
			name = nameList[i]
		}
		in.add(3+i, name)
	}
	return nil
}

// readTableflip takes the sockets a tableflip-speaking parent passed.
func (in *inheritance) readTableflip() error {
	os.Unsetenv(tableflipEnv)
	in.parent = os.NewFile(3, "tableflip-ready")
	in.parentDone = os.NewFile(4, "tableflip-names")
	closeOnExec(3)
	closeOnExec(4)
	var names [][]string
	if err := gob.NewDecoder(in.parentDone).Decode(&names); err != nil {
		return fmt.Errorf("celeris: reading the socket names from the parent process: %w", err)
	}
	for i, parts := range names {
		if len(parts) != 3 || (parts[0] != tableflipListen && parts[0] != tableflipPacket) {
			closeOnExec(tableflipFirst + i) // not a socket for us (tableflip's conn or fd kinds)
			continue
		}
		in.add(tableflipFirst+i, parts[2])
	}
	return nil
}

// add adopts descriptor fd, checking that it is a socket.
func (in *inheritance) add(fd int, name string) {
	closeOnExec(fd)
	stream, ok := socketStream(fd)
	if !ok {
		return // not a socket
	}
	in.sockets = append(in.sockets, &inheritedSocket{
		name:   name,
		stream: stream,
		file:   os.NewFile(uintptr(fd), "inherited-"+name),
	})
}

// take returns the socket for a role served on the configured address addr, or
// nil: by name (the role or the address), else in order among unnamed sockets.
func (in *inheritance) take(role, addr string, stream bool) *os.File {
	in.mu.Lock()
	defer in.mu.Unlock()
	pick := func(s *inheritedSocket) *os.File {
		s.taken = true
		return s.file
	}
	for _, s := range in.sockets {
		if !s.taken && s.stream == stream && (s.name == role || (addr != "" && s.name == addr)) {
			return pick(s)
		}
	}
	// Unnamed sockets in order: the first stream socket is plaintext, the next
	// TLS (the roles take them in that order, see adopt); datagram: HTTP/3.
	for _, s := range in.sockets {
		if !s.taken && s.stream == stream && s.name == "" {
			return pick(s)
		}
	}
	return nil
}

// adopted are the sockets a Server took at start (s.mu held while set).
type adopted struct {
	plain, tls net.Listener   // nil: listen on the address
	packet     net.PacketConn // the HTTP/3 transport's, nil: it listens itself
}

// close closes the sockets taken, when the server fails to start on them, so
// that none is left open with connections queued that nobody accepts.
func (a *adopted) close() {
	for _, ln := range []net.Listener{a.plain, a.tls} {
		if ln != nil {
			_ = ln.Close()
		}
	}
	if a.packet != nil {
		_ = a.packet.Close()
	}
	*a = adopted{}
}

// adopt takes the inherited sockets for s's addresses (s.mu held, at start).
func (s *Server) adopt(tlsOnly bool) error {
	in := inheritedSockets()
	if in.err != nil {
		return in.err
	}
	if len(in.sockets) == 0 {
		return nil
	}
	listen := func(role, addr string) (net.Listener, error) {
		f := in.take(role, addr, true)
		if f == nil {
			return nil, nil
		}
		ln, err := net.FileListener(f) // a dup of f
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("celeris: inherited socket %q for %s: %w", role, addr, err)
		}
		return ln, nil
	}
	var err error
	if tlsOnly {
		s.inherit.tls, err = listen(roleHTTPS, s.cfg.Addr)
	} else {
		if s.listener == nil {
			s.inherit.plain, err = listen(roleHTTP, s.cfg.Addr)
		}
		if err == nil && s.cfg.TLSAddr != "" {
			s.inherit.tls, err = listen(roleHTTPS, s.cfg.TLSAddr)
		}
	}
	if err != nil {
		return err
	}
	if len(s.transports) > 0 {
		tlsAddr := s.cfg.TLSAddr
		if tlsOnly {
			tlsAddr = s.cfg.Addr
		}
		if f := in.take(roleH3, tlsAddr, false); f != nil {
			pc, err := net.FilePacketConn(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("celeris: inherited socket %q: %w", roleH3, err)
			}
			s.inherit.packet = pc
		}
	}
	if s.inherit.plain != nil && s.cfg.Engine == EngineGnet {
		s.logger.Info("celeris: the inherited plaintext socket is served by the std engine (gnet listens by address only)")
	}
	return nil
}

// errNoParent: Ready was reported with no parent process waiting.
var errNoParent = errors.New("celeris: no parent process")

// notifyParent tells a tableflip-speaking parent that the process serves: it
// writes the ready byte on descriptor 3 and closes it. Without a parent it
// returns errNoParent.
func (in *inheritance) notifyParent() error {
	in.mu.Lock()
	w := in.parent
	in.parent = nil
	in.mu.Unlock()
	if w == nil {
		return errNoParent
	}
	defer w.Close()
	_, err := w.Write([]byte{tableflipReady})
	return err
}

// InheritedSockets counts the sockets this process inherited (socket
// activation, or a parent's Upgrade) that no Server took yet: stream sockets
// (listeners) and datagram sockets (HTTP/3). A program that serves TLS only
// when asked may turn it on when more than one listener, or a datagram socket,
// was handed to it: the second listener is for TLS, the datagram socket for
// HTTP/3.
func InheritedSockets() (stream, datagram int) {
	in := inheritedSockets()
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, s := range in.sockets {
		switch {
		case s.taken:
		case s.stream:
			stream++
		default:
			datagram++
		}
	}
	return stream, datagram
}
