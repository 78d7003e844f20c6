package stdengine

import "net"

// tlsIO is what a TLS connection's crypto/tls.Conn reads and writes through: the
// accepted connection, with the records of the owner's output batches collected
// (collecting, set around the owner's tls.Conn.Write) instead of written one
// write(2) each. The owner puts what was collected on the socket as one batch
// (conn.emit): at the end of an iteration, or later, but always before anything
// could block, since Read emits before it reads from the socket. So a batch,
// however many records it makes, costs one write, and several iterations over
// input crypto/tls already holds (records that came in one read) share it. Any
// other write (the handshake, the writer encrypting a large batch, close_notify,
// a hijacker's) goes straight to the socket.
type tlsIO struct {
	net.Conn   // the accepted connection
	c          *conn
	collecting bool   // owner: its tls.Conn.Write runs; collect in out
	out        []byte // owner: collected records, not yet emitted
}

// Write collects p while the owner encrypts a batch, or writes it to the socket.
// crypto/tls calls it with its output lock held.
func (t *tlsIO) Write(p []byte) (int, error) {
	if !t.collecting {
		return t.Conn.Write(p)
	}
	t.out = append(t.out, p...)
	return len(p), nil
}

// Read emits what was collected, then reads from the socket: crypto/tls calls it
// only when the records it holds are used up, so this is where the owner may
// block. Collected records exist only while the owner serves (emit runs before
// the connection is closed or hijacked).
func (t *tlsIO) Read(p []byte) (int, error) {
	if len(t.out) > 0 {
		t.c.emit()
	}
	return t.Conn.Read(p)
}
