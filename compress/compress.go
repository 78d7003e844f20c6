// Package compress gives the compress middleware (github.com/celeris-dev/celeris/middleware/compress)
// the zstd (RFC 8878) and brotli (RFC 7932) content codings, beside its gzip.
//
//	compress.Register() // zstd, then br, then gzip
//	s.Use(mwcompress.Default())
//
// or, with the order and levels chosen per middleware:
//
//	s.Use(mwcompress.New(mwcompress.Config{Encoders: []mwcompress.Encoder{
//		compress.Zstd(0), compress.Brotli(0), compress.Gzip(0),
//	}}))
//
// It is a module of its own so that the core module requires no compression
// library (the middleware, its negotiation, streaming and gzip live in the
// core; an Encoder here only encodes). The middleware decides everything else:
// q-value negotiation with the server's order on ties, per-flush encoding of
// streams and SSE, no encoding of 206 answers, compressed types or bodies under
// its MinLength, Vary and ETag.
//
// gzip here is klauspost/compress's, the same format as the standard
// library's at about twice its speed.
//
// zstd is klauspost/compress's encoder: whole bodies go through one shared
// Encoder's EncodeAll, streams through pooled Encoders of one goroutine each.
// Its window is 1 MiB at most (RFC 8878 §3.1.1.1.2 lets HTTP decoders refuse
// more than 8 MiB; browsers do).
//
// brotli is github.com/molecule-man/go-brrr, chosen over
// github.com/andybalholm/brotli on the same bodies: equal output size
// (both follow the reference encoder) and faster at every level measured,
// 1.5 to 10 times at quality 4 (docs/BENCHMARKS.md, "Compression"). Both are
// pure Go; go-brrr needs no cgo. Its window is 1 MiB (lgwin 20).
//
// Memory: an encoded stream holds its encoder until it ends. Heap per open
// stream after a first flush (2026-11-28, 809891b, go1.26.8 linux/amd64, 20
// streams): zstd 2.5 MiB, brotli 0.6 MiB, gzip 1.0 MiB (the standard
// library's 0.8 MiB). A server with many long-lived SSE streams may offer
// brotli first, or Skip those routes.
package compress

import mwcompress "github.com/celeris-dev/celeris/middleware/compress"

// Register registers Zstd(0), Brotli(0) and Gzip(0) with the middleware
// (mwcompress.Register; this Gzip replaces the built-in one): a middleware
// built afterwards with no Encoders of its own prefers zstd, then br, then
// gzip when a client accepts several with the same q-value.
func Register() {
	mwcompress.Register(Zstd(0), Brotli(0), Gzip(0))
}
