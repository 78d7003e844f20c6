// Package static serves files from an fs.FS (embed.FS, os.DirFS, fstest.MapFS...).
//
// It is a handler, not a middleware: mount it on a wildcard route whose parameter
// holds the file path.
//
//	//go:embed public
//	var public embed.FS
//
//	s.GET("/static/*filepath", static.New(static.Config{FS: public, Root: "public"}))
//
// # Paths
//
// The parameter is percent-decoded, then refused with 400 Bad Request when it holds a
// NUL, a backslash or a ".." segment, or fails fs.ValidPath once cleaned (repeated
// and trailing slashes and "." segments are cleaned away). An fs.FS cannot reach
// outside its root anyway; the checks make traversal attempts (CWE-22) fail loudly
// and the same way on every platform. Names beginning with "." (".env", ".git/") are
// answered 404 unless Config.Dotfiles is set.
//
// A directory is served as its Index file ("index.html"): a request for it without
// the trailing slash is redirected (301) to the slash form with a relative Location,
// so that relative links in the page resolve; without an index file the answer is
// 404. Directories are never listed.
//
// # Headers and conditional requests
//
// Content-Type comes from the extension (mime.TypeByExtension), else from sniffing
// the first 512 bytes (http.DetectContentType). Last-Modified is the file's ModTime
// (omitted when zero, as in embed.FS). ETag is strong: the size and ModTime in hex,
// or, when ModTime is zero, the size and CRC-32C of the content. If-None-Match (or,
// without it, If-Modified-Since) answers 304 (RFC 9110 §13.2.2). Accept-Ranges: bytes
// is always sent.
//
// # Ranges
//
// A GET with a single byte range (RFC 9110 §14.1.2: "bytes=a-b", "bytes=a-",
// "bytes=-n") is answered 206 with Content-Range; a range starting past the end
// gets 416 with "Content-Range: bytes */size". A request for several ranges, or
// with a malformed Range header, gets the whole file with 200 (RFC 9110 §14.2 lets a
// server ignore Range; multipart/byteranges is not implemented). If-Range that
// does not match the current ETag or Last-Modified also gets the whole file.
//
// # Memory
//
// Files up to MaxInMemory bytes (4 MiB) are read whole into a pooled buffer and
// sent with Content-Length. Larger files are streamed from the file
// (Context.StreamLength: still with their exact Content-Length, never chunked),
// seeking for ranges when the file supports io.Seeker. A HEAD request for such a
// file gets the same Content-Length and no body.
package static

import (
	"errors"
	"hash/crc32"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/httprange"
	"github.com/celeris-dev/celeris/middleware/etag"
)

// Config configures the handler. FS is required; zero values mean the defaults in
// brackets.
type Config struct {
	// FS holds the files.
	FS fs.FS
	// Root is the directory of FS to serve ["."].
	Root string
	// Param is the name of the route's wildcard parameter ["filepath"].
	Param string
	// Index is the file served for a directory ["index.html"]; "-" serves none
	// (directories are 404).
	Index string
	// Dotfiles serves names beginning with "." [false: 404].
	Dotfiles bool
	// CacheControl is sent with every file answer, e.g. "public, max-age=3600"
	// [none].
	CacheControl string
	// MaxInMemory is the largest file, in bytes, read whole and sent with a
	// Content-Length [4 MiB]; larger files are streamed.
	MaxInMemory int64
}

// DefaultMaxInMemory is Config.MaxInMemory's default.
const DefaultMaxInMemory = 4 << 20

// maxPooledBuffer bounds the read buffers kept for reuse.
const maxPooledBuffer = 256 << 10

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var (
	errBadPath    = celeris.NewHTTPError(http.StatusBadRequest, "")
	errNotFound   = celeris.NewHTTPError(http.StatusNotFound, "")
	errForbidden  = celeris.NewHTTPError(http.StatusForbidden, "")
	errNotAllowed = celeris.NewHTTPError(http.StatusMethodNotAllowed, "")
)

type server struct {
	fsys fs.FS
	cfg  Config
	bufs sync.Pool // *[]byte
}

// New returns a handler serving cfg.FS. It panics when FS is nil or Root is not a
// valid directory name.
func New(cfg Config) celeris.HandlerFunc {
	if cfg.FS == nil {
		panic("static: Config.FS is nil")
	}
	if cfg.Root == "" {
		cfg.Root = "."
	}
	if cfg.Param == "" {
		cfg.Param = "filepath"
	}
	if cfg.Index == "" {
		cfg.Index = "index.html"
	}
	if cfg.MaxInMemory <= 0 {
		cfg.MaxInMemory = DefaultMaxInMemory
	}
	fsys, err := fs.Sub(cfg.FS, cfg.Root)
	if err != nil {
		panic("static: Root " + strconv.Quote(cfg.Root) + ": " + err.Error())
	}
	s := &server{fsys: fsys, cfg: cfg}
	return s.serve
}

func (s *server) serve(c *celeris.Context) error {
	if m := c.Method(); m != http.MethodGet && m != http.MethodHead {
		c.SetHeader("Allow", "GET, HEAD")
		return errNotAllowed
	}
	raw := c.Param(s.cfg.Param)
	name, err := s.clean(raw)
	if err != nil {
		return err
	}
	f, fi, err := s.open(name)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		f.Close()
		if raw != "" && !strings.HasSuffix(raw, "/") {
			return redirectToDir(c, name)
		}
		if s.cfg.Index == "-" {
			return errNotFound
		}
		name = path.Join(name, s.cfg.Index)
		if f, fi, err = s.open(name); err != nil {
			return err
		}
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return errNotFound
	}
	return s.serveFile(c, name, f, fi)
}

// clean turns the raw parameter into a valid fs.FS name, or an HTTPError.
func (s *server) clean(raw string) (string, error) {
	name := raw
	if strings.IndexByte(name, '%') >= 0 {
		var err error
		if name, err = url.PathUnescape(name); err != nil {
			return "", errBadPath
		}
	}
	if strings.IndexByte(name, 0) >= 0 || strings.IndexByte(name, '\\') >= 0 {
		return "", errBadPath // NUL truncation and Windows separators
	}
	for seg := range strings.SplitSeq(name, "/") {
		switch {
		case seg == "..":
			return "", errBadPath // CWE-22 path traversal
		case !s.cfg.Dotfiles && len(seg) > 1 && seg[0] == '.':
			return "", errNotFound
		}
	}
	name = path.Clean("/" + name)[1:]
	if name == "" {
		name = "."
	}
	if !fs.ValidPath(name) {
		return "", errBadPath
	}
	return name, nil
}

func (s *server) open(name string) (fs.File, fs.FileInfo, error) {
	f, err := s.fsys.Open(name)
	if err != nil {
		return nil, nil, fsError(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fsError(err)
	}
	return f, fi, nil
}

func fsError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrInvalid):
		return errNotFound
	case errors.Is(err, fs.ErrPermission):
		return errForbidden
	default:
		return err // 500, logged by the error handler
	}
}

// redirectToDir answers 301 to the directory's slash form. The Location is
// relative ("./name/"), never "//host": an absolute path built from the request
// could be read as a network-path reference (an open redirect).
func redirectToDir(c *celeris.Context, name string) error {
	loc := "./" + url.PathEscape(path.Base(name)) + "/"
	if q := c.RawQuery(); q != "" {
		loc += "?" + q
	}
	return c.Redirect(http.StatusMovedPermanently, loc)
}

func (s *server) serveFile(c *celeris.Context, name string, f fs.File, fi fs.FileInfo) error {
	size := fi.Size()
	inMemory := size <= s.cfg.MaxInMemory

	var data []byte
	if inMemory {
		bp := s.getBuf(int(size))
		defer s.putBuf(bp)
		data = (*bp)[:size]
		if _, err := io.ReadFull(f, data); err != nil {
			return err
		}
	}

	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = s.sniff(f, data)
	}
	mod := fi.ModTime()
	var lastMod, tag string
	if !mod.IsZero() {
		lastMod = mod.UTC().Format(http.TimeFormat)
		tag = `"` + strconv.FormatInt(size, 16) + "-" + strconv.FormatInt(mod.UnixNano(), 16) + `"`
	} else if inMemory {
		tag = `"` + strconv.FormatInt(size, 16) + "-" + strconv.FormatUint(uint64(crc32.Checksum(data, castagnoli)), 16) + `"`
	}
	if tag != "" {
		c.SetHeader("ETag", tag)
	}
	if lastMod != "" {
		c.SetHeader("Last-Modified", lastMod)
	}
	if s.cfg.CacheControl != "" {
		c.SetHeader("Cache-Control", s.cfg.CacheControl)
	}
	if notModified(c, tag, mod) {
		return c.NoContent(http.StatusNotModified)
	}
	c.SetHeader("Accept-Ranges", "bytes")

	status, start, end := http.StatusOK, int64(0), size // [start, end)
	if rh := c.Header("Range"); rh != "" && c.Method() == http.MethodGet && ifRange(c, tag, mod) {
		switch a, b, res := parseRange(rh, size); res {
		case rangeOK:
			status, start, end = http.StatusPartialContent, a, b
			c.SetHeader("Content-Range", "bytes "+strconv.FormatInt(a, 10)+"-"+strconv.FormatInt(b-1, 10)+"/"+strconv.FormatInt(size, 10))
		case rangeUnsatisfiable:
			c.SetHeader("Content-Range", "bytes */"+strconv.FormatInt(size, 10))
			c.DelHeader("Accept-Ranges")
			// The answer goes through the server's error handler, as
			// celeris's own File does.
			return celeris.NewHTTPError(http.StatusRequestedRangeNotSatisfiable, "")
		}
	}
	if inMemory {
		return c.Blob(status, ctype, data[start:end])
	}
	return s.stream(c, f, status, ctype, start, end)
}

// sniff detects the content type from the first 512 bytes (data when the file was
// read whole; otherwise read from f, which is then rewound or reopened by stream).
func (s *server) sniff(f fs.File, data []byte) string {
	if data != nil {
		return http.DetectContentType(data[:min(len(data), 512)])
	}
	sk, ok := f.(io.Seeker)
	if !ok {
		return "application/octet-stream"
	}
	var head [512]byte
	n, _ := io.ReadFull(f, head[:])
	if _, err := sk.Seek(0, io.SeekStart); err != nil {
		return "application/octet-stream"
	}
	return http.DetectContentType(head[:n])
}

// stream sends [start, end) of f as a streamed response.
func (s *server) stream(c *celeris.Context, f fs.File, status int, ctype string, start, end int64) error {
	if start > 0 {
		if sk, ok := f.(io.Seeker); ok {
			if _, err := sk.Seek(start, io.SeekStart); err != nil {
				return err
			}
		} else if _, err := io.CopyN(io.Discard, f, start); err != nil {
			return err
		}
	} else if sk, ok := f.(io.Seeker); ok {
		if _, err := sk.Seek(0, io.SeekStart); err != nil { // after sniff
			return err
		}
	}
	w, err := c.StreamLength(status, ctype, end-start)
	if err != nil || c.Method() == http.MethodHead {
		return err
	}
	bp := s.getBuf(32 << 10)
	defer s.putBuf(bp)
	_, err = io.CopyBuffer(w, io.LimitReader(f, end-start), (*bp)[:32<<10])
	return err
}

func (s *server) getBuf(n int) *[]byte {
	if bp, _ := s.bufs.Get().(*[]byte); bp != nil {
		if cap(*bp) >= n {
			*bp = (*bp)[:n]
			return bp
		}
		s.bufs.Put(bp)
	}
	b := make([]byte, n)
	return &b
}

func (s *server) putBuf(bp *[]byte) {
	if cap(*bp) <= maxPooledBuffer {
		s.bufs.Put(bp)
	}
}

// notModified evaluates If-None-Match, or else If-Modified-Since (RFC 9110 §13.2.2).
func notModified(c *celeris.Context, tag string, mod time.Time) bool {
	if inm := c.Header("If-None-Match"); inm != "" {
		return tag != "" && etag.NoneMatch(inm, tag)
	}
	ims := c.Header("If-Modified-Since")
	if ims == "" || mod.IsZero() {
		return false
	}
	t, err := http.ParseTime(ims)
	return err == nil && !mod.Truncate(time.Second).After(t)
}

// ifRange reports whether a Range header applies (RFC 9110 §13.1.5): no If-Range,
// or one that matches the current validator (strong comparison for tags, exact
// equality for dates).
func ifRange(c *celeris.Context, tag string, mod time.Time) bool {
	ir := c.Header("If-Range")
	if ir == "" {
		return true
	}
	if strings.HasPrefix(ir, `"`) || strings.HasPrefix(ir, "W/") {
		return tag != "" && ir == tag && !strings.HasPrefix(ir, "W/")
	}
	t, err := http.ParseTime(ir)
	return err == nil && !mod.IsZero() && mod.Truncate(time.Second).Equal(t)
}

type rangeResult = httprange.Result

const (
	rangeIgnore        = httprange.Ignore        // malformed or several ranges: whole file
	rangeOK            = httprange.OK            // one satisfiable range
	rangeUnsatisfiable = httprange.Unsatisfiable // 416
)

// parseRange parses a Range value for a representation of size bytes (RFC 9110
// §14.1.2) and returns the one range as [start, end); several ranges are served as
// the whole file. The parser is Context.File's (internal/httprange).
func parseRange(v string, size int64) (start, end int64, res rangeResult) {
	if strings.IndexByte(v, ',') >= 0 {
		return 0, 0, rangeIgnore
	}
	rs, res := httprange.Parse(v, size)
	if res != rangeOK {
		return 0, 0, res
	}
	return rs[0].Start, rs[0].End, rangeOK
}
