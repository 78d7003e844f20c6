package celeris

import "fmt"

// A final response has a three-digit status of 200-999 (RFC 9110 §15: 1xx are
// interim responses, which String, JSON, Blob, NoContent and Stream cannot send).
// Any other status is a programmer error: as net/http's WriteHeader does, the
// response methods panic, which the server turns into 500 and logs once, the same
// on HTTP/1.1, HTTP/2 and without a network (celeristest).
func checkFinalStatus(code int) {
	if code < 200 || code > 999 {
		invalidStatus(code)
	}
}

//go:noinline
func invalidStatus(code int) {
	panic(fmt.Sprintf("celeris: invalid final response status code %d (want 200-999)", code))
}
