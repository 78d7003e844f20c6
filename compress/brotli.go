package compress

import (
	"io"
	"strconv"
	"sync"

	brrr "github.com/molecule-man/go-brrr"

	mwcompress "github.com/celeris-dev/celeris/middleware/compress"
)

// DefaultBrotliLevel is Brotli's quality when given 0: 4, the usual choice for
// responses made per request (from 5 up each step costs about twice the time
// for a few per cent of size; 10 and 11 are for content compressed once).
const DefaultBrotliLevel = 4

// brotliLGWin bounds the window to 1 MiB (see the package doc).
const brotliLGWin = 20

type brotliEncoder struct {
	level   int
	writers sync.Pool // *brotliWriter
}

// brotliWriter is a pooled go-brrr Writer with the appender EncodeAll writes
// through.
type brotliWriter struct {
	*brrr.Writer
	app appender
}

// appender is an io.Writer that appends to a slice.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// Brotli returns the brotli Encoder at a quality, 1 (fastest) to 11 (0 means
// DefaultBrotliLevel). It panics on a quality outside 0-11.
func Brotli(level int) mwcompress.Encoder {
	if level < 0 || level > 11 {
		panic("compress: brotli quality " + strconv.Itoa(level) + " is not in 1-11")
	}
	if level == 0 {
		level = DefaultBrotliLevel
	}
	return &brotliEncoder{level: level}
}

func (b *brotliEncoder) Coding() string { return "br" }

func (b *brotliEncoder) get(dst io.Writer, sizeHint uint) *brotliWriter {
	if w, _ := b.writers.Get().(*brotliWriter); w != nil {
		w.ResetWithSizeHint(dst, sizeHint)
		return w
	}
	bw, err := brrr.NewWriterOptions(dst, b.level, brrr.WriterOptions{LGWin: brotliLGWin, SizeHint: sizeHint})
	if err != nil { // the level was checked in Brotli
		panic("compress: brotli: " + err.Error())
	}
	return &brotliWriter{Writer: bw}
}

func (b *brotliEncoder) Acquire(dst io.Writer) mwcompress.Writer { return b.get(dst, 0) }

func (b *brotliEncoder) Release(w mwcompress.Writer) {
	if bw, ok := w.(*brotliWriter); ok {
		bw.Reset(nil) // keeps no reference to the output
		b.writers.Put(bw)
	}
}

// EncodeAll encodes a whole body, telling the encoder its size
// (mwcompress.BodyEncoder).
func (b *brotliEncoder) EncodeAll(src, dst []byte) []byte {
	w := b.get(nil, uint(len(src)))
	w.app.b = dst
	w.ResetWithSizeHint(&w.app, uint(len(src)))
	_, _ = w.Write(src) // appends do not fail
	_ = w.Close()
	out := w.app.b
	w.app.b = nil
	b.Release(w)
	return out
}
