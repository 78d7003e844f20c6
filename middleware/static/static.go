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
// # Serving
//
// The file itself is served by Context.FileFS, the same path as Context.File:
// Content-Type from the extension (mime.TypeByExtension), else from sniffing the
// first 512 bytes; Last-Modified from ModTime (omitted when zero, as in embed.FS);
// a strong ETag from the size and ModTime, or, when ModTime is zero, the size and
// CRC-32C of the content (files up to 4 MiB); Accept-Ranges: bytes. Conditional
// requests follow RFC 9110 §13.2.2 (If-Match and If-Unmodified-Since: 412;
// If-None-Match, else If-Modified-Since: 304), and ranges RFC 9110 §14 (one range:
// 206 with Content-Range; several: 206 multipart/byteranges; none satisfiable: 416
// with "Content-Range: bytes */size"; If-Range honoured). Config.CacheControl is
// added to every file answer.
//
// # Memory
//
// Every answer carries its exact Content-Length and is never chunked. A body of up
// to 64 KiB is read into the request's buffer and sent whole; a larger one is
// streamed from the file through a pooled 32 KiB buffer, waiting while the client
// reads slowly, so a download holds no more than the connection's output bound
// whatever the file's size. A HEAD request gets the GET's Content-Length and no
// body.
package static

import (
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/celeris-dev/celeris"
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
	// MaxInMemory is ignored: files are streamed with their length (see Memory
	// in the package doc) whatever their size.
	//
	// Deprecated: files are always streamed, never read whole; the field stays
	// so that configurations that set it still compile.
	MaxInMemory int64
}

// DefaultMaxInMemory is a value for Config.MaxInMemory, which is ignored.
//
// Deprecated: Config.MaxInMemory is ignored.
const DefaultMaxInMemory = 4 << 20

var (
	errBadPath    = celeris.NewHTTPError(http.StatusBadRequest, "")
	errNotFound   = celeris.NewHTTPError(http.StatusNotFound, "")
	errForbidden  = celeris.NewHTTPError(http.StatusForbidden, "")
	errNotAllowed = celeris.NewHTTPError(http.StatusMethodNotAllowed, "")
)

type server struct {
	fsys fs.FS
	cfg  Config
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
	fi, err := s.stat(name)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		if raw != "" && !strings.HasSuffix(raw, "/") {
			return redirectToDir(c, name)
		}
		if s.cfg.Index == "-" {
			return errNotFound
		}
		name = path.Join(name, s.cfg.Index)
		if fi, err = s.stat(name); err != nil {
			return err
		}
	}
	if !fi.Mode().IsRegular() {
		return errNotFound
	}
	if s.cfg.CacheControl != "" {
		c.SetHeader("Cache-Control", s.cfg.CacheControl)
	}
	if err := c.FileFS(s.fsys, name); err != nil {
		var he *celeris.HTTPError
		if errors.As(err, &he) && (he.Code == http.StatusNotFound || he.Code == http.StatusForbidden) {
			// The file went away, or lost its permissions, since stat: the
			// package's own answers, without the file system's error.
			c.DelHeader("Cache-Control")
			return fsError(he.Err)
		}
		return err
	}
	return nil
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

// stat describes name, through fs.StatFS when the file system has it.
func (s *server) stat(name string) (fs.FileInfo, error) {
	fi, err := fs.Stat(s.fsys, name)
	if err != nil {
		return nil, fsError(err)
	}
	return fi, nil
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
