package h1

import "github.com/celeris-dev/celeris/internal/httpmsg"

// WriteHeaderLength starts a streamed response of known length, framed with
// Content-Length (httpmsg.SizedWriter). Write then appends the body as it is
// (no chunks); End checks that exactly length bytes came, and otherwise closes
// the connection after what was written (the client sees the body cut short,
// RFC 9112 §6.3 rule 5, never a smuggled next message).
func (ex *exchange) WriteHeaderLength(status int, header []httpmsg.Field, length int64) error {
	if length < 0 {
		return ex.WriteHeader(status, header)
	}
	if ex.answered {
		return ErrAnswered
	}
	if status < 200 {
		status, header = 500, nil
	}
	ex.answered, ex.streaming = true, true
	ex.closeAfter()
	*ex.out = AppendHeadCached(*ex.out, status, header, length, !ex.keepAlive, ex.http10 && ex.keepAlive, ex.validCache())
	if ex.isHead || !bodyAllowed(status) {
		ex.discard = true
		return nil
	}
	ex.sized, ex.remain = true, length
	return nil
}

// writeSized appends p to a response of known length (Write's part).
func (ex *exchange) writeSized(p []byte) (int, error) {
	var err error
	if int64(len(p)) > ex.remain {
		p, err = p[:ex.remain], httpmsg.ErrLength
	}
	ex.remain -= int64(len(p))
	*ex.out = append(*ex.out, p...)
	return len(p), err
}

// endSized finishes a response of known length (End's part).
func (ex *exchange) endSized() error {
	if ex.remain != 0 {
		ex.keepAlive = false // the framing promised more: close after what was sent
		return httpmsg.ErrLength
	}
	return nil
}
