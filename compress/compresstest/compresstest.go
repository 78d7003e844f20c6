// Package compresstest decodes encoded answers with decoders independent of
// the compress module's encoders, for tests: Python's zstandard (libzstd),
// brotli (the reference decoder) and gzip modules.
package compresstest

import (
	"bytes"
	"fmt"
	"os/exec"
	"strconv"
	"testing"
)

// Encoded is an answer to decode: its Content-Encoding and bytes.
type Encoded struct {
	Coding string // "zstd", "br" or "gzip"
	Body   []byte
}

// HavePython reports whether python3 with the zstandard and brotli packages
// is installed (pip install zstandard brotli).
func HavePython() bool {
	return exec.Command("python3", "-c", "import zstandard, brotli").Run() == nil
}

const script = `import sys, gzip, zstandard, brotli
r, w = sys.stdin.buffer, sys.stdout.buffer
while True:
    line = r.readline()
    if not line:
        break
    c, n = line.split()
    b = r.read(int(n))
    if c == b"zstd":
        out = zstandard.ZstdDecompressor().decompressobj().decompress(b)
    elif c == b"br":
        out = brotli.decompress(b)
    else:
        out = gzip.decompress(b)
    w.write(b"%d\n" % len(out) + out)`

// DecodeWithPython decodes each answer in one python3 process and returns the
// decoded bodies in order. It skips the test when HavePython is false, and
// fails it when an answer does not decode.
func DecodeWithPython(tb testing.TB, in []Encoded) [][]byte {
	tb.Helper()
	if !HavePython() {
		tb.Skip("python3 with zstandard and brotli is not installed (pip install zstandard brotli)")
	}
	var stdin bytes.Buffer
	for _, e := range in {
		fmt.Fprintf(&stdin, "%s %d\n", e.Coding, len(e.Body))
		stdin.Write(e.Body)
	}
	cmd := exec.Command("python3", "-c", script)
	cmd.Stdin = &stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("compresstest: python3 could not decode: %v: %s", err, stderr.String())
	}
	res := make([][]byte, len(in))
	for i := range res {
		line, rest, ok := bytes.Cut(out, []byte("\n"))
		n, err := strconv.Atoi(string(line))
		if !ok || err != nil || n > len(rest) {
			tb.Fatalf("compresstest: python3's output ends before answer %d", i)
		}
		res[i], out = rest[:n], rest[n:]
	}
	return res
}
