package compress

import (
	"io"
	"strconv"
	"sync"

	"github.com/klauspost/compress/gzip"

	mwcompress "github.com/celeris-dev/celeris/middleware/compress"
)

type gzipEncoder struct {
	level   int
	writers sync.Pool // *gzip.Writer
}

// Gzip returns a gzip Encoder on klauspost/compress's gzip, which writes the
// same format as the standard library's (the middleware's built-in Gzip) at
// about twice its speed (docs/BENCHMARKS.md, "Compression"). level is 1 to 9,
// or -2 for Huffman only; 0 means 6. It panics on another level.
func Gzip(level int) mwcompress.Encoder {
	if level == 0 {
		level = gzip.DefaultCompression
	}
	if _, err := gzip.NewWriterLevel(nil, level); err != nil {
		panic("compress: gzip level " + strconv.Itoa(level) + ": " + err.Error())
	}
	return &gzipEncoder{level: level}
}

func (g *gzipEncoder) Coding() string { return "gzip" }

func (g *gzipEncoder) Acquire(dst io.Writer) mwcompress.Writer {
	if w, _ := g.writers.Get().(*gzip.Writer); w != nil {
		w.Reset(dst)
		return w
	}
	w, _ := gzip.NewWriterLevel(dst, g.level) // the level was checked in Gzip
	return w
}

func (g *gzipEncoder) Release(w mwcompress.Writer) {
	if gw, ok := w.(*gzip.Writer); ok {
		gw.Reset(nil) // keeps no reference to the output
		g.writers.Put(gw)
	}
}
