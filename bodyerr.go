package celeris

import (
	"errors"
	"io"
	"net/http"

	"github.com/celeris-dev/celeris/internal/h1"
	"github.com/celeris-dev/celeris/internal/h2"
)

// bodyError turns an error met while reading the request body into the
// *HTTPError the error handler gets, so that a custom handler that maps
// *HTTPError (errors.As) answers the client's mistake with its status instead of
// 500. The protocol's error stays reachable through Unwrap (errors.Is(err,
// ErrBodyAborted) still holds):
//
//   - a body over MaxRequestBodySize: 413 (HTTP/1.1 chunked, HTTP/2 without
//     content-length);
//   - a malformed body (a bad chunk): the parser's status, 400;
//   - a body cut short (the client closed, reset the stream or went away): 400.
//
// io.EOF, nil and errors that already are *HTTPError pass unchanged.
func bodyError(err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return err
	}
	code, msg := http.StatusBadRequest, "request body incomplete"
	var sc interface{ StatusCode() int }
	switch {
	case errors.Is(err, h2.ErrBodyTooLarge):
		code, msg = http.StatusRequestEntityTooLarge, "request body too large"
	case errors.As(err, &sc):
		code, msg = sc.StatusCode(), "malformed request body"
		if code == http.StatusRequestEntityTooLarge {
			msg = "request body too large"
		} else if code < 400 || code > 599 {
			code = http.StatusBadRequest
		}
	case errors.Is(err, h1.ErrBodyAborted), errors.Is(err, h2.ErrStreamClosed),
		errors.Is(err, io.ErrUnexpectedEOF):
	default:
		return err // not the client's doing (an I/O error of the server's): 500
	}
	return &HTTPError{Code: code, Message: msg, Err: err}
}

// bodyReader is the reader BodyReader returns for a streamed body: it reports
// read errors as bodyError does. It lives in the Context (no allocation).
type bodyReader struct{ r io.Reader }

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil {
		err = bodyError(err)
	}
	return n, err
}

// Close ends a Read blocked on another goroutine and makes later Reads fail,
// when the protocol's body supports it (HTTP/2 streams, HTTP/1.1 streamed
// bodies: their readers are io.Closers); otherwise it does nothing.
func (b *bodyReader) Close() error {
	if cl, ok := b.r.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}
