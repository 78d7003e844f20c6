package bytesconv

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The Date header value (RFC 9110 §5.6.7 IMF-fixdate) is refreshed once a second by
// one goroutine, started on first use, instead of formatting time per response.
var (
	dateValue atomic.Pointer[[]byte]
	dateOnce  sync.Once
)

func refreshDate() {
	b := time.Now().UTC().AppendFormat(make([]byte, 0, 29), http.TimeFormat)
	dateValue.Store(&b)
}

// Date returns the current IMF-fixdate, at most one second old. The returned slice
// is never modified (each refresh stores a new one): it may be kept.
func Date() []byte {
	if p := dateValue.Load(); p != nil {
		return *p
	}
	dateOnce.Do(func() {
		refreshDate()
		go func() {
			t := time.NewTicker(time.Second)
			for range t.C {
				refreshDate()
			}
		}()
	})
	return *dateValue.Load()
}
