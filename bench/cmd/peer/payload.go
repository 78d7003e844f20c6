package main

import (
	"bytes"
	"strconv"
)

// message is the /json answer, encoded per request by every framework.
type message struct {
	Message string `json:"message"`
}

var hello = message{Message: "Hello, World!"}

// maxDownload bounds /download?size=N.
const maxDownload = 4 << 20

// payload backs every /download answer (read-only).
var payload = bytes.Repeat([]byte("x"), maxDownload)

// downloadSize parses the size query value; ok is false when it is missing,
// malformed, negative or above maxDownload.
func downloadSize(s string) (n int, ok bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > maxDownload {
		return 0, false
	}
	return n, true
}

const (
	textPlain   = "text/plain"
	appJSON     = "application/json"
	octetStream = "application/octet-stream"
)
