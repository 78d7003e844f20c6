package stdengine

import "net"

// tlsIO is what a TLS connection's crypto/tls.Conn reads and writes through: the
// accepted connection, with the records crypto/tls writes collected while the
// owner serves (collect) instead of written one write(2) each. The owner puts
// what was collected on the socket as one batch (conn.emit): at the end of an
// iteration, or later, but always before anything could block, since Read emits
// before it reads from the socket. So an iteration's output, however many records
// it makes, costs one write, and several iterations over input crypto/tls
// already holds (records that came in one read) share it. Before the handshake
// completes, and once the writer ended (close_notify, a hijacked connection),
// writes go straight to the socket.
type tlsIO struct {
	net.Conn // the accepted connection
	c        *conn
	collect  bool   // owner: collect writes in out
	out      []byte // owner: collected records, not yet emitted
}

// Write collects p, or writes it to the socket when not collecting. crypto/tls
// calls it with its output lock held, from the owner goroutine only while
// collecting (the owner's Write and Read).
func (t *tlsIO) Write(p []byte) (int, error) {
	if !t.collect {
		return t.Conn.Write(p)
	}
	t.out = append(t.out, p...)
	t.c.collected.Store(int64(len(t.out)))
	return len(p), nil
}

// Read emits what was collected, then reads from the socket: crypto/tls calls it
// only when the records it holds are used up, so this is where the owner may
// block.
func (t *tlsIO) Read(p []byte) (int, error) {
	if t.collect && len(t.out) > 0 {
		t.c.emit()
	}
	return t.Conn.Read(p)
}
