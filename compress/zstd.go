package compress

import (
	"io"
	"strconv"
	"sync"

	"github.com/klauspost/compress/zstd"

	mwcompress "github.com/celeris-dev/celeris/middleware/compress"
)

// DefaultZstdLevel is Zstd's level when given 0: zstd's own default, 3.
const DefaultZstdLevel = 3

// zstdWindow bounds the window (see the package doc).
const zstdWindow = 1 << 20

type zstdEncoder struct {
	opts    []zstd.EOption
	whole   *zstd.Encoder // shared: EncodeAll is safe for concurrent use
	writers sync.Pool     // *zstd.Encoder, one goroutine each
}

// Zstd returns the zstd Encoder at a zstd level, 1 (fastest) to 22 (0 means
// DefaultZstdLevel), mapped to klauspost/compress's nearest speed setting
// (zstd.EncoderLevelFromZstd: 1, 2-5, 6-9, 10+). It panics on a level outside
// 0-22.
func Zstd(level int) mwcompress.Encoder {
	if level < 0 || level > 22 {
		panic("compress: zstd level " + strconv.Itoa(level) + " is not in 1-22")
	}
	if level == 0 {
		level = DefaultZstdLevel
	}
	opts := []zstd.EOption{
		zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
		zstd.WithWindowSize(zstdWindow),
		zstd.WithLowerEncoderMem(true),
	}
	whole, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		panic("compress: zstd: " + err.Error())
	}
	return &zstdEncoder{opts: append(opts, zstd.WithEncoderConcurrency(1)), whole: whole}
}

func (z *zstdEncoder) Coding() string { return "zstd" }

func (z *zstdEncoder) Acquire(dst io.Writer) mwcompress.Writer {
	if w, _ := z.writers.Get().(*zstd.Encoder); w != nil {
		w.Reset(dst)
		return w
	}
	w, err := zstd.NewWriter(dst, z.opts...)
	if err != nil { // the options were checked in Zstd
		panic("compress: zstd: " + err.Error())
	}
	return w
}

func (z *zstdEncoder) Release(w mwcompress.Writer) {
	if zw, ok := w.(*zstd.Encoder); ok {
		zw.Reset(nil) // keeps no reference to the output
		z.writers.Put(zw)
	}
}

// EncodeAll encodes a whole body in one frame (mwcompress.BodyEncoder).
func (z *zstdEncoder) EncodeAll(src, dst []byte) []byte { return z.whole.EncodeAll(src, dst) }
