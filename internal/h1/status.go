package h1

import (
	"net/http"

	"github.com/celeris-dev/celeris/internal/bytesconv"
)

// Status lines "HTTP/1.1 <code> <reason>\r\n" for codes 100-599 are encoded once, at
// init, into one array; statusLine[code] views it. Reasons are net/http's (the IANA
// registry, with RFC 9110's name for 413); a code without one gets "Unknown".
var statusLine [600][]byte

func init() {
	buf := make([]byte, 0, 500*32)
	var start [600]int
	for code := 100; code < 600; code++ {
		text := http.StatusText(code)
		if code == http.StatusRequestEntityTooLarge {
			text = "Content Too Large" // RFC 9110 §15.5.14 (net/http keeps the old name)
		}
		if text == "" {
			text = "Unknown"
		}
		start[code] = len(buf)
		buf = append(buf, "HTTP/1.1 "...)
		buf = bytesconv.AppendUint(buf, uint64(code))
		buf = append(buf, ' ')
		buf = append(buf, text...)
		buf = append(buf, "\r\n"...)
	}
	for code := 100; code < 600; code++ {
		end := len(buf)
		if code < 599 {
			end = start[code+1]
		}
		statusLine[code] = buf[start[code]:end:end]
	}
}

// AppendStatusLine appends "HTTP/1.1 <code> <reason>\r\n" (RFC 9112 §4). Codes
// 600-999 are written with the reason "Unknown". A status code has three digits (RFC
// 9110 §15); any other value is a programmer error that would corrupt the stream, so
// it is written as 500 rather than panic on the event loop.
func AppendStatusLine(dst []byte, status int) []byte {
	if status >= 100 && status < 600 {
		return append(dst, statusLine[status]...)
	}
	if status < 100 || status > 999 {
		return append(dst, statusLine[500]...)
	}
	dst = append(dst, "HTTP/1.1 "...)
	dst = bytesconv.AppendUint(dst, uint64(status))
	return append(dst, " Unknown\r\n"...)
}
