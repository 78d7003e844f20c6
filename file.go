package celeris

// Files: File, Attachment, Inline, FileFS, SaveFile, StreamLength.
//
// Life of a File: the file is opened and stat'ed; its validators (ETag from size
// and modification time, or content; Last-Modified) answer conditional requests (304, 412);
// a Range header selects one range (206 with Content-Range), several (206
// multipart/byteranges) or none satisfiable (416). The answer then leaves with
// its exact Content-Length: small bodies as one complete response, larger ones
// streamed through StreamLength, which the protocol frames with Content-Length
// (HTTP/1.1) or content-length (HTTP/2), never chunked. On an Inline route a
// larger body is recorded instead and streamed from a worker once the handler
// returned (moved.go): the event loop must not wait for the client.

import (
	"errors"
	"hash/crc32"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/celeris-dev/celeris/internal/httprange"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// fileInMemory is the largest body File sends as one complete response; larger
// ones are streamed with their length.
const fileInMemory = 64 << 10

// File sends the file at name (a path on the local file system) with its
// Content-Type (from the extension, else sniffed), Last-Modified, ETag and
// Accept-Ranges. The ETag is strong: the size and modification time in hex, or,
// for a file without a modification time (embed.FS) of up to 4 MiB, the size and
// the CRC-32C of its content. It answers conditional requests (If-None-Match, then
// If-Modified-Since: 304; If-Match, then If-Unmodified-Since: 412; RFC 9110
// §13.2.2) and Range requests on GET (RFC 9110 §14): one range is a 206 with
// Content-Range, several a 206 multipart/byteranges, an unsatisfiable one 416 with
// "Content-Range: bytes */size"; If-Range is honoured. HEAD gets the headers and
// the Content-Length of the GET, without a body. Every answer carries its exact
// Content-Length, whatever the size: large files are streamed, never chunked.
// A missing file is a 404 *HTTPError, an unreadable one 403, a directory 404.
func (c *Context) File(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return fileError(err)
	}
	defer c.closeFile(f) // unless a worker sends it (moved.go)
	return c.serveFile(f, name)
}

// FileFS is File for a file of fsys (name as fs.FS names it).
func (c *Context) FileFS(fsys fs.FS, name string) error {
	f, err := fsys.Open(name)
	if err != nil {
		return fileError(err)
	}
	defer c.closeFile(f) // unless a worker sends it (moved.go)
	return c.serveFile(f, name)
}

// Attachment is File with "Content-Disposition: attachment" and the file name the
// browser should save it under (RFC 6266; a non-ASCII name is sent as filename*
// in UTF-8, with an ASCII fallback). An empty filename means name's base name.
func (c *Context) Attachment(name, filename string) error {
	return c.disposition("attachment", name, filename)
}

// Inline is File with "Content-Disposition: inline" and a file name (see
// Attachment): the browser shows the file, and offers the name when saving it.
func (c *Context) Inline(name, filename string) error {
	return c.disposition("inline", name, filename)
}

func (c *Context) disposition(kind, name, filename string) error {
	if filename == "" {
		filename = filepath.Base(name)
	}
	c.SetHeader("Content-Disposition", ContentDisposition(kind, filename))
	return c.File(name)
}

// ContentDisposition formats a Content-Disposition value (RFC 6266 §4): kind
// ("attachment" or "inline") and filename as a quoted string; when filename is not
// printable ASCII, filename* carries it in UTF-8 (RFC 8187) after an ASCII
// fallback in which other characters are '_'.
func ContentDisposition(kind, filename string) string {
	ascii := true
	var fb strings.Builder
	for _, r := range filename {
		switch {
		case r >= 0x7f || r < 0x20:
			ascii = false
			fb.WriteByte('_')
		case r == '"' || r == '\\':
			fb.WriteByte('\\')
			fb.WriteRune(r)
		default:
			fb.WriteRune(r)
		}
	}
	v := kind + `; filename="` + fb.String() + `"`
	if !ascii {
		v += "; filename*=UTF-8''" + rfc8187Escape(filename)
	}
	return v
}

// rfc8187Escape percent-encodes everything but attr-char (RFC 8187 §3.2.1).
func rfc8187Escape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9' ||
			strings.IndexByte("!#$&+-.^_`|~", ch) >= 0 {
			b.WriteByte(ch)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[ch>>4])
		b.WriteByte(hex[ch&15])
	}
	return b.String()
}

func (c *Context) serveFile(f fs.File, name string) error {
	fi, err := f.Stat()
	if err != nil {
		return fileError(err)
	}
	if fi.IsDir() {
		return &HTTPError{Code: http.StatusNotFound, Err: errors.New("celeris: File: " + name + " is a directory")}
	}
	size, mod := fi.Size(), fi.ModTime()
	ctype := c.ResponseHeader("Content-Type")
	if ctype == "" {
		ctype = mime.TypeByExtension(path.Ext(name))
	}
	if ctype == "" {
		ctype = sniffFile(f)
	}
	var tag, lastMod string
	if !mod.IsZero() {
		lastMod = mod.UTC().Format(http.TimeFormat)
		tag = `"` + strconv.FormatInt(size, 16) + "-" + strconv.FormatInt(mod.UnixNano(), 16) + `"`
		c.SetHeader("Last-Modified", lastMod)
	} else {
		tag = contentTag(f, size)
	}
	if tag != "" {
		c.SetHeader("ETag", tag)
	}
	switch checkPreconditions(c, tag, mod) {
	case http.StatusNotModified:
		c.DelHeader("Content-Type")
		return c.NoContent(http.StatusNotModified)
	case http.StatusPreconditionFailed:
		return NewHTTPError(http.StatusPreconditionFailed, "")
	}
	c.SetHeader("Accept-Ranges", "bytes")
	ranges, res := []byteRange{{Start: 0, End: size}}, rangeIgnore
	if rh := c.Header("Range"); rh != "" && c.Method() == http.MethodGet && ifRangeMatches(c, tag, mod) {
		var rs []byteRange
		if rs, res = parseRanges(rh, size); res == rangeOK {
			ranges = rs
		}
	}
	switch {
	case res == rangeUnsatisfiable:
		// RFC 9110 §15.5.17: 416 with "Content-Range: bytes */size"; the answer
		// goes through the error handler, as 412's does.
		c.SetHeader("Content-Range", "bytes */"+strconv.FormatInt(size, 10))
		return NewHTTPError(http.StatusRequestedRangeNotSatisfiable, "")
	case res == rangeOK && len(ranges) == 1:
		r := ranges[0]
		c.SetHeader("Content-Range", "bytes "+strconv.FormatInt(r.Start, 10)+"-"+strconv.FormatInt(r.End-1, 10)+"/"+strconv.FormatInt(size, 10))
		return c.sendRanges(f, http.StatusPartialContent, ctype, ranges, "", size)
	case res == rangeOK:
		return c.sendRanges(f, http.StatusPartialContent, ctype, ranges, rangeBoundary(tag, size), size)
	}
	return c.sendRanges(f, http.StatusOK, ctype, ranges, "", size)
}

func fileError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &HTTPError{Code: http.StatusNotFound, Err: err}
	case errors.Is(err, fs.ErrPermission):
		return &HTTPError{Code: http.StatusForbidden, Err: err}
	}
	return err
}

// contentTagMax is the largest file without a modification time (an embed.FS
// file) whose ETag contentTag computes from its content.
const contentTagMax = 4 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// contentTag is the strong ETag of a file without a modification time: its size
// and the CRC-32C of its content, read through a pooled buffer and rewound; "" for
// a file over contentTagMax or one that cannot seek back.
func contentTag(f fs.File, size int64) string {
	sk, ok := f.(io.Seeker)
	if !ok || size > contentTagMax {
		return ""
	}
	bp := fileBufs.Get().(*[]byte)
	defer fileBufs.Put(bp)
	h := crc32.New(castagnoli)
	_, err := io.CopyBuffer(h, io.LimitReader(f, size), *bp)
	if _, serr := sk.Seek(0, io.SeekStart); err != nil || serr != nil {
		return ""
	}
	return `"` + strconv.FormatInt(size, 16) + "-" + strconv.FormatUint(uint64(h.Sum32()), 16) + `"`
}

// sniffFile detects the content type from the first 512 bytes of f.
func sniffFile(f fs.File) string {
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

// rangeBoundary is the multipart boundary of a file version: fixed for a given
// version, so the answer is the same bytes each time.
func rangeBoundary(tag string, size int64) string {
	h := uint64(14695981039346656037)
	for i := 0; i < len(tag); i++ {
		h = (h ^ uint64(tag[i])) * 1099511628211
	}
	return "celeris-" + strconv.FormatUint(h, 36) + strconv.FormatInt(size, 36)
}

// sendRanges sends ranges of f: the one range as it is, or several as
// multipart/byteranges with boundary.
func (c *Context) sendRanges(f fs.File, status int, ctype string, ranges []byteRange, boundary string, size int64) error {
	var total int64
	var heads []string
	if boundary == "" {
		total = ranges[0].End - ranges[0].Start
	} else {
		heads = make([]string, len(ranges))
		for i, r := range ranges {
			h := "\r\n--" + boundary + "\r\nContent-Type: " + ctype + "\r\nContent-Range: bytes " +
				strconv.FormatInt(r.Start, 10) + "-" + strconv.FormatInt(r.End-1, 10) + "/" + strconv.FormatInt(size, 10) + "\r\n\r\n"
			if i == 0 {
				h = h[2:]
			}
			heads[i] = h
			total += int64(len(h)) + r.End - r.Start
		}
		total += int64(len("\r\n--" + boundary + "--\r\n"))
		ctype = "multipart/byteranges; boundary=" + boundary
	}
	head := c.Method() == http.MethodHead
	if total <= fileInMemory && boundary == "" {
		b := c.Buffer()
		if !head {
			if err := copyRange(b, f, ranges[0]); err != nil {
				return err
			}
		}
		if head {
			// A HEAD answer carries the GET's length (RFC 9110 §9.3.2).
			_, err := c.StreamLength(status, ctype, total)
			return err
		}
		return c.Blob(status, ctype, b.Bytes())
	}
	if _, sized := c.w.(httpmsg.SizedWriter); sized && !head && c.onLoop() {
		// An inline route must not wait for the client: a worker sends the
		// file (moved.go).
		return c.moveFile(f, status, ctype, ranges, heads, boundary, total)
	}
	w, err := c.StreamLength(status, ctype, total)
	if err != nil || head {
		return err
	}
	return writeRanges(w, f, ranges, heads, boundary)
}

// writerOnly hides ReadFrom, so io.CopyBuffer uses the buffer.
type writerOnly struct{ io.Writer }

var fileBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func copyRange(w io.Writer, f fs.File, r byteRange) error {
	if err := seekTo(f, r.Start); err != nil {
		return err
	}
	_, err := io.CopyN(w, f, r.End-r.Start)
	return err
}

func seekTo(f fs.File, off int64) error {
	if sk, ok := f.(io.Seeker); ok {
		_, err := sk.Seek(off, io.SeekStart)
		return err
	}
	if off == 0 {
		return nil
	}
	return errors.New("celeris: file is not seekable")
}

// StreamLength starts a streamed response whose body is exactly length bytes:
// it is framed with Content-Length (HTTP/1.1) or content-length (HTTP/2), never
// chunked, so the client knows the size in advance. Write past length fails
// (httpmsg's ErrLength; the excess is dropped); a handler that returns having
// written less breaks the response off (the connection closes on HTTP/1.1, the
// stream is reset on HTTP/2), since the framing promised more. A HEAD request
// gets the length and no body. Under a writer without length support (an
// http.Handler's through ServeHTTP sets the header itself) it streams as Stream.
func (c *Context) StreamLength(code int, contentType string, length int64) (*StreamWriter, error) {
	sw, ok := c.w.(httpmsg.SizedWriter)
	if !ok || length < 0 {
		return c.Stream(code, contentType)
	}
	return c.startStream(code, contentType, sw, length)
}

// checkPreconditions evaluates the conditional headers of RFC 9110 §13.2.2 for a
// representation with tag and mod: 412, 304, or 0 to go on.
func checkPreconditions(c *Context, tag string, mod time.Time) int {
	if im := c.Header("If-Match"); im != "" {
		if tag == "" || !etagMatch(im, tag, false) {
			return http.StatusPreconditionFailed
		}
	} else if ius := c.Header("If-Unmodified-Since"); ius != "" && !mod.IsZero() {
		if t, err := http.ParseTime(ius); err == nil && mod.Truncate(time.Second).After(t) {
			return http.StatusPreconditionFailed
		}
	}
	get := c.Method() == http.MethodGet || c.Method() == http.MethodHead
	if inm := c.Header("If-None-Match"); inm != "" {
		if tag != "" && etagMatch(inm, tag, true) {
			if get {
				return http.StatusNotModified
			}
			return http.StatusPreconditionFailed
		}
		return 0
	}
	if ims := c.Header("If-Modified-Since"); ims != "" && get && !mod.IsZero() {
		if t, err := http.ParseTime(ims); err == nil && !mod.Truncate(time.Second).After(t) {
			return http.StatusNotModified
		}
	}
	return 0
}

// etagMatch reports whether a list of entity tags (or "*") matches tag, with the
// weak comparison (If-None-Match) or the strong one (If-Match) of RFC 9110 §8.8.3.2.
func etagMatch(list, tag string, weak bool) bool {
	list = strings.TrimSpace(list)
	if list == "*" {
		return true
	}
	for t := range strings.SplitSeq(list, ",") {
		t = strings.TrimSpace(t)
		if weak {
			t = strings.TrimPrefix(t, "W/")
		} else if strings.HasPrefix(t, "W/") {
			continue
		}
		if t == strings.TrimPrefix(tag, "W/") {
			return true
		}
	}
	return false
}

// ifRangeMatches: RFC 9110 §13.1.5, a strong tag match or an exact date.
func ifRangeMatches(c *Context, tag string, mod time.Time) bool {
	ir := c.Header("If-Range")
	if ir == "" {
		return true
	}
	if strings.HasPrefix(ir, `"`) {
		return tag != "" && ir == tag
	}
	if strings.HasPrefix(ir, "W/") {
		return false
	}
	t, err := http.ParseTime(ir)
	return err == nil && !mod.IsZero() && mod.Truncate(time.Second).Equal(t)
}

// The Range parser is shared with the static middleware (internal/httprange).
type (
	byteRange   = httprange.Range
	rangeResult = httprange.Result
)

const (
	rangeIgnore        = httprange.Ignore
	rangeOK            = httprange.OK
	rangeUnsatisfiable = httprange.Unsatisfiable
)

var parseRanges = httprange.Parse

const maxRanges = httprange.MaxRanges

// SaveFile copies an uploaded file (from FormFile or MultipartForm) to dst,
// creating or truncating it with mode 0o644. dst is a path chosen by the server:
// never build it from fh.Filename unchecked (path traversal); the base name
// (filepath.Base) of a cleaned name is the least to do.
func (c *Context) SaveFile(fh *multipart.FileHeader, dst string) error {
	src, err := fh.Open()
	if err != nil {
		return err
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
