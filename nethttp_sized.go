package celeris

import (
	"strconv"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// WriteHeaderLength starts a streamed response of known length under net/http
// (httpmsg.SizedWriter): Content-Length is set, and net/http frames the body
// with it (and enforces it) instead of chunking.
func (nw *netWriter) WriteHeaderLength(status int, header []httpmsg.Field, length int64) error {
	if nw.answered {
		return ErrResponseWritten
	}
	nw.answered, nw.streaming = true, true
	h := nw.setHeader(header, "")
	if bodyAllowedForStatus(status) {
		if _, ok := h["Content-Type"]; !ok {
			h["Content-Type"] = nil
		}
		if length >= 0 {
			h["Content-Length"] = []string{strconv.FormatInt(length, 10)}
		}
	}
	nw.w.WriteHeader(status)
	return nil
}

var (
	_ httpmsg.ResponseWriter = (*netWriter)(nil)
	_ httpmsg.SizedWriter    = (*netWriter)(nil)
	_ httpmsg.ContextWriter  = (*netWriter)(nil)
)
