package h2

import (
	"net"
	"sync"
	"testing"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// netServer is a tiny std-net engine for tests: one goroutine per connection owns
// the Conn and serializes OnData and OnWake, as an event loop would; a reader
// goroutine hands it the bytes; writes are flushed after each call.
type netServer struct {
	ln   net.Listener
	h    httpmsg.Handler
	cfg  *Config
	wg   sync.WaitGroup
	mu   sync.Mutex
	conn map[net.Conn]struct{}
}

func startNetServer(t testing.TB, h httpmsg.Handler, cfg *Config) *netServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &netServer{ln: ln, h: h, cfg: cfg, conn: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

func (s *netServer) addr() string { return s.ln.Addr().String() }

func (s *netServer) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conn[nc] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(nc)
	}
}

func (s *netServer) close() {
	_ = s.ln.Close()
	s.mu.Lock()
	for nc := range s.conn {
		_ = nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// loopConn is the httpmsg.Conn of one test connection.
type loopConn struct {
	nc     net.Conn
	out    []byte
	wake   chan struct{}
	closed bool
}

func (l *loopConn) Write(b []byte) { l.out = append(l.out, b...) }
func (l *loopConn) Wake() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}
func (l *loopConn) Close()               { l.closed = true }
func (l *loopConn) RemoteAddr() net.Addr { return l.nc.RemoteAddr() }

func (l *loopConn) flush() error {
	if len(l.out) == 0 {
		return nil
	}
	_, err := l.nc.Write(l.out)
	l.out = l.out[:0]
	return err
}

func (s *netServer) serve(nc net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conn, nc)
		s.mu.Unlock()
		_ = nc.Close()
	}()
	lc := &loopConn{nc: nc, wake: make(chan struct{}, 1)}
	c := NewConn(lc, s.h, testPool, s.cfg)
	reads := make(chan []byte, 16)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(reads)
		for {
			b := make([]byte, 64<<10)
			n, err := nc.Read(b)
			if n > 0 {
				select {
				case reads <- b[:n]:
				case <-done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	var pending []byte
	var cerr error
	for cerr == nil && !lc.closed {
		if err := lc.flush(); err != nil {
			cerr = err
			break
		}
		select {
		case b, ok := <-reads:
			if !ok {
				cerr = net.ErrClosed
				break
			}
			pending = append(pending, b...)
			n, err := c.OnData(pending)
			pending = append(pending[:0], pending[n:]...)
			cerr = err
		case <-lc.wake:
			cerr = c.OnWake()
		}
	}
	_ = lc.flush()
	c.OnClose(cerr)
}
