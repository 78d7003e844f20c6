package celeris

import (
	"encoding/gob"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/celeris-dev/celeris/internal/stdengine"
)

// Self-upgrade
//
// Upgrade starts the program again (the command line it was started with, the
// same environment, stdin, stdout and stderr) with the server's listening
// sockets passed on as extra files, in the environment of cloudflare/tableflip
// (activation.go), and waits
// until the new process says it serves: its Server, started with the same
// addresses, takes the sockets instead of listening, and writes the ready byte
// once every engine serves. Connections queued on a socket meanwhile wait in
// its backlog and are accepted by either process: none is refused. Then the
// caller shuts the old process down (StartGraceful does on SIGHUP): it stops
// accepting (the sockets stay open in the new process) and drains every
// protocol as a graceful shutdown does: HTTP/1.1 answers in flight carry
// Connection: close, HTTP/2 gets the two-step GOAWAY, WebSockets close 1001,
// gRPC streams end as in GracefulStop, HTTP/3 gets GOAWAY.
//
// HTTP/3's UDP socket is one socket read by both processes while the old one
// drains: a datagram reaches whichever reads it first. Each process drops
// the datagrams of QUIC connections it does not know (quic-go sends no
// stateless reset without a StatelessResetKey), and the old one, which no
// longer accepts, drops the first datagrams of new connections too: the
// clients' loss recovery resends them until they reach the right process.
// Requests in flight finish, or end with H3_NO_ERROR or H3_REQUEST_REJECTED,
// which are retryable, when the old process stops.

// PacketTransport is a Transport that serves on a UDP socket it can name
// (HTTP/3): Upgrade passes the socket on to the new process, whose transport
// gets it as TransportEnv.PacketConn.
type PacketTransport interface {
	Transport
	// PacketConn is the socket the transport reads, nil when it does not serve.
	PacketConn() net.PacketConn
}

// Upgrade errors.
var (
	// ErrUpgradeInProgress: Upgrade was called while another one runs.
	ErrUpgradeInProgress = errors.New("celeris: an upgrade is in progress")
	// ErrUpgradeNotServing: Upgrade was called before the server served or
	// after its shutdown began.
	ErrUpgradeNotServing = errors.New("celeris: upgrade: the server is not serving")
)

// startArgs is the command line the process was started with (os.Args before
// main could change it): Upgrade starts the program again with it.
var startArgs = append([]string(nil), os.Args...)

// upgradeTimeout bounds the wait for the new process: past it, the new
// process is killed and the old one goes on serving.
var upgradeTimeout = time.Minute

// fileEngine is an engine whose listening socket can be passed on.
type fileEngine interface {
	ListenerFile() (*os.File, error)
}

var _ fileEngine = (*stdengine.Engine)(nil)

// upgradeState is Upgrade's (guarded by its mu).
type upgradeState struct {
	mu      sync.Mutex
	running bool
	done    bool // a new process serves: this one is to shut down
	// parentPipe is the names pipe of the process that took over: it stays
	// open (referenced here, out of the finalizer's reach) while this one lives.
	parentPipe *os.File
}

// Upgrade starts a new process of the program with the server's listening
// sockets and returns nil once it serves (see "Self-upgrade" above); the
// caller then shuts this server down, which drains it. When the new process
// fails to start, exits, or does not serve within a minute, Upgrade returns
// the error and this server goes on serving as before. One upgrade runs at a
// time (ErrUpgradeInProgress). Unix only.
//
// The new process must be started the same way: a Server with the same
// addresses, started with Start or StartTLS (or StartGraceful). Sockets are
// matched by address (Config.Addr, Config.TLSAddr): a new process configured
// with another address listens there itself.
func (s *Server) Upgrade() error {
	if !inheritSupported {
		return errors.New("celeris: Upgrade is not supported on this OS")
	}
	s.upg.mu.Lock()
	if s.upg.running {
		s.upg.mu.Unlock()
		return ErrUpgradeInProgress
	}
	if s.upg.done {
		s.upg.mu.Unlock()
		return ErrUpgradeNotServing
	}
	s.upg.running = true
	s.upg.mu.Unlock()
	err := s.upgrade()
	s.upg.mu.Lock()
	s.upg.running = false
	s.upg.done = err == nil
	s.upg.mu.Unlock()
	if err != nil {
		s.logger.Error("celeris: upgrade failed; this process goes on serving", "err", err)
	} else {
		s.logger.Info("celeris: upgraded: the new process serves")
	}
	return err
}

// passedSocket is a socket Upgrade passes on, with its tableflip name.
type passedSocket struct {
	name [3]string
	file *os.File
}

// sockets duplicates the listening sockets of the running engines.
func (s *Server) sockets() ([]passedSocket, error) {
	select {
	case <-s.ready:
	default:
		return nil, ErrUpgradeNotServing
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown {
		return nil, ErrUpgradeNotServing
	}
	var out []passedSocket
	fail := func(err error) ([]passedSocket, error) {
		for _, p := range out {
			p.file.Close()
		}
		return nil, err
	}
	tlsAddr := s.cfg.TLSAddr
	for _, e := range []struct {
		eng  servingEngine
		addr string
	}{{s.eng, s.cfg.Addr}, {s.tlsEng, s.cfg.TLSAddr}} {
		if e.eng == nil {
			continue
		}
		fe, ok := e.eng.(fileEngine)
		if !ok {
			return fail(errors.New("celeris: upgrade: an engine cannot pass its socket on"))
		}
		f, err := fe.ListenerFile()
		if err != nil {
			return fail(err)
		}
		out = append(out, passedSocket{name: [3]string{tableflipListen, "tcp", e.addr}, file: f})
	}
	if s.tlsEng == nil {
		tlsAddr = s.cfg.Addr // StartTLS
	}
	for _, e := range s.transportEngs {
		pt, ok := e.(*transportEngine).t.(PacketTransport)
		if !ok {
			continue
		}
		uc, ok := pt.PacketConn().(*net.UDPConn)
		if !ok {
			continue
		}
		f, err := uc.File()
		if err != nil {
			return fail(err)
		}
		out = append(out, passedSocket{name: [3]string{tableflipPacket, "udp", tlsAddr}, file: f})
		break // the first transport serves the TLS port's UDP (transport.go)
	}
	return out, nil
}

// upgrade starts the new process and waits for it to serve.
func (s *Server) upgrade() error {
	socks, err := s.sockets()
	if err != nil {
		return err
	}
	defer func() {
		for _, p := range socks {
			p.file.Close() // the child has its own copies
		}
	}()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer readyR.Close()
	namesR, namesW, err := os.Pipe()
	if err != nil {
		readyW.Close()
		return err
	}
	path, err := executable()
	if err != nil {
		readyW.Close()
		namesR.Close()
		namesW.Close()
		return err
	}
	cmd := exec.Command(path, startArgs[1:]...)
	cmd.Args[0] = startArgs[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{readyW, namesR} // descriptors 3 and 4
	names := make([][]string, 0, len(socks))
	for _, p := range socks {
		cmd.ExtraFiles = append(cmd.ExtraFiles, p.file) // from 5 on
		names = append(names, p.name[:])
	}
	sentinel := tableflipEnv + "=yes"
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, tableflipEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, sentinel)
	err = cmd.Start()
	readyW.Close()
	namesR.Close()
	if err != nil {
		namesW.Close()
		return fmt.Errorf("celeris: upgrade: starting %s: %w", path, err)
	}
	// The names pipe stays open while this process lives: the new one sees
	// it reach end of file when this one exits (tableflip's WaitForParent).
	go func() { _ = gob.NewEncoder(namesW).Encode(names) }()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ready := make(chan bool, 1)
	go func() {
		var b [1]byte
		n, _ := readyR.Read(b[:])
		ready <- n == 1 && b[0] == tableflipReady
	}()
	t := time.NewTimer(upgradeTimeout)
	defer t.Stop()
	select {
	case ok := <-ready:
		if ok {
			s.upg.mu.Lock()
			s.upg.parentPipe = namesW
			s.upg.mu.Unlock()
			return nil
		}
		err = <-exited // the pipe closed without the byte: the process ended
		namesW.Close()
		return fmt.Errorf("celeris: upgrade: the new process (pid %d) exited before it served: %v", cmd.Process.Pid, err)
	case err = <-exited:
		namesW.Close()
		return fmt.Errorf("celeris: upgrade: the new process (pid %d) exited before it served: %v", cmd.Process.Pid, err)
	case <-t.C:
		_ = cmd.Process.Kill()
		namesW.Close()
		return fmt.Errorf("celeris: upgrade: the new process (pid %d) did not serve within %v", cmd.Process.Pid, upgradeTimeout)
	case <-s.stopping:
		// Shutdown began (SIGTERM under StartGraceful) before the new process
		// served: the service is to stop, so the new process must not outlive
		// this one.
		_ = cmd.Process.Kill()
		<-exited
		namesW.Close()
		return fmt.Errorf("celeris: upgrade: cancelled by Shutdown; the new process (pid %d) was stopped", cmd.Process.Pid)
	}
}

// executable is the program to start: its first argument as tableflip starts
// it (a path, or a name looked up in PATH), so that a binary replaced at that
// path is the one started; os.Executable when that cannot be found.
func executable() (string, error) {
	a := startArgs[0]
	if strings.ContainsRune(a, filepath.Separator) {
		if _, err := os.Stat(a); err == nil {
			return a, nil
		}
	} else if p, err := exec.LookPath(a); err == nil {
		return p, nil
	}
	return os.Executable()
}

// notifyParent tells the process that started this one by Upgrade that this
// one serves (every engine listens).
func (s *Server) notifyParent() {
	if err := inheritedSockets().notifyParent(); err != nil && !errors.Is(err, errNoParent) {
		s.logger.Error("celeris: telling the parent process this one serves", "err", err)
	}
}
