package httpmsg

import "errors"

// ErrLength is returned by Write when a body of declared length (SizedWriter)
// would grow past it, and by End when it ended short of it.
var ErrLength = errors.New("httpmsg: body does not match its declared length")

// SizedWriter is implemented by a ResponseWriter that can stream a body whose
// length is known in advance (a file): WriteHeaderLength starts a streamed
// response as WriteHeader does, but framed with "Content-Length: length"
// (HTTP/1.1) or a content-length field (HTTP/2) instead of chunked coding, so the
// client knows the size (download progress, Range requests) and the framing
// costs nothing per Write. The body then comes with Write/Flush/End as usual;
// Write past length fails with ErrLength (the excess is dropped), and End before
// length bytes were written fails with ErrLength and breaks the message off
// (HTTP/1.1: the connection closes; HTTP/2: RST_STREAM), since the framing
// promised more. A HEAD response carries the length and no body. Trailers passed
// to End are dropped: a body with Content-Length has none on HTTP/1.1.
type SizedWriter interface {
	WriteHeaderLength(status int, header []Field, length int64) error
}
