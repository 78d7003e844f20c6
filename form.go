package celeris

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// Form parsing. Each form is parsed at most once per request and cached in the
// Context (under formKey, with Set), so FormValue, PostForm, MultipartForm and
// FormFile may be called in any order and any number of times. Parsed values are
// copies: they stay valid after the handler returns.

// formKey is the Context value key of the request's *formCache. The NUL keeps it
// apart from any key a user would choose.
const formKey = "celeris.form\x00"

// defaultFormMemory is net/http's default maxMemory for multipart forms.
const defaultFormMemory = 32 << 20

// formCache holds the forms parsed for one request.
type formCache struct {
	post      url.Values
	postErr   error
	postDone  bool
	multi     *multipart.Form
	multiErr  error
	multiDone bool
}

func (c *Context) forms() *formCache {
	if v, ok := c.Get(formKey); ok {
		if fc, ok := v.(*formCache); ok {
			return fc
		}
	}
	fc := new(formCache)
	c.Set(formKey, fc)
	return fc
}

// Media types of form bodies.
const (
	mediaFormURLEncoded = "application/x-www-form-urlencoded"
	mediaMultipartForm  = "multipart/form-data"
)

// formMediaType returns the form media type ct names, or "" for any other type.
func formMediaType(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(mt)
	switch {
	case httpmsg.EqualFold(mt, mediaFormURLEncoded):
		return mediaFormURLEncoded
	case httpmsg.EqualFold(mt, mediaMultipartForm):
		return mediaMultipartForm
	}
	return ""
}

// FormValue returns the first value of the form field name: from the body of an
// application/x-www-form-urlencoded or multipart/form-data request first, then
// from the query string, as http.Request.FormValue does. It returns "" when the
// field is absent; body parse errors are ignored here (call PostForm to see them).
func (c *Context) FormValue(name string) string {
	if formMediaType(c.Header("Content-Type")) != "" {
		if v, err := c.PostForm(); err == nil {
			if vs := v[name]; len(vs) > 0 {
				return vs[0]
			}
		}
	}
	return c.Query(name)
}

// PostForm parses the request body as a form and returns its fields (not those of
// the query string; see QueryValues). application/x-www-form-urlencoded bodies are
// parsed whole (Config.MaxRequestBodySize bounds them); multipart/form-data bodies
// through MultipartForm, returning their non-file fields. A request without a
// Content-Type and without a body has an empty form.
//
// Errors are *HTTPError: 415 for another Content-Type, 400 for a malformed body,
// 413 for a body over the limit.
func (c *Context) PostForm() (url.Values, error) {
	fc := c.forms()
	if !fc.postDone {
		fc.postDone = true
		fc.post, fc.postErr = c.parsePostForm()
	}
	return fc.post, fc.postErr
}

func (c *Context) parsePostForm() (url.Values, error) {
	ct := c.Header("Content-Type")
	switch formMediaType(ct) {
	case mediaFormURLEncoded:
		b, err := c.Body()
		if err != nil {
			return nil, err
		}
		v, err := url.ParseQuery(string(b))
		if err != nil {
			return nil, &HTTPError{Code: http.StatusBadRequest, Message: "malformed form body: " + err.Error(), Err: err}
		}
		return v, nil
	case mediaMultipartForm:
		f, err := c.MultipartForm(c.formMemory())
		if err != nil {
			return nil, err
		}
		return url.Values(f.Value), nil
	}
	if ct == "" {
		b, err := c.Body()
		if err != nil {
			return nil, err
		}
		if len(b) == 0 {
			return url.Values{}, nil
		}
	}
	return nil, NewHTTPError(http.StatusUnsupportedMediaType,
		"Content-Type must be application/x-www-form-urlencoded or multipart/form-data")
}

// formMemory is the maxMemory of multipart forms parsed implicitly (PostForm,
// FormValue, FormFile): large enough for any body the server accepts, so that no
// part spills to a temporary file nobody would remove.
func (c *Context) formMemory() int64 {
	return max(defaultFormMemory, c.server.cfg.MaxRequestBodySize)
}

// MultipartForm parses a multipart/form-data body (RFC 7578). Up to maxMemory
// bytes of file parts are held in memory, the rest in temporary files; non-file
// fields may use 10 MB more (mime/multipart). The body is also bounded by
// Config.MaxRequestBodySize. The first call decides maxMemory; later calls return
// the same form.
//
// Temporary files belong to the caller: when maxMemory is below the body size,
// call form.RemoveAll once done with the files. (PostForm, FormValue and FormFile
// parse with a maxMemory above the body limit, so they never create any.)
//
// Errors are *HTTPError: 415 for another Content-Type, 400 for a missing boundary
// or a malformed body, 413 for a body over the limit.
func (c *Context) MultipartForm(maxMemory int64) (*multipart.Form, error) {
	fc := c.forms()
	if !fc.multiDone {
		fc.multiDone = true
		fc.multi, fc.multiErr = c.parseMultipartForm(maxMemory)
	}
	return fc.multi, fc.multiErr
}

func (c *Context) parseMultipartForm(maxMemory int64) (*multipart.Form, error) {
	ct := c.Header("Content-Type")
	if formMediaType(ct) != mediaMultipartForm {
		return nil, NewHTTPError(http.StatusUnsupportedMediaType, "Content-Type must be multipart/form-data")
	}
	_, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return nil, &HTTPError{Code: http.StatusBadRequest, Message: "malformed Content-Type: " + err.Error(), Err: err}
	}
	boundary := params["boundary"]
	if boundary == "" {
		return nil, NewHTTPError(http.StatusBadRequest, "multipart/form-data without a boundary")
	}
	streamed := c.req.BodyReader != nil && c.body == nil && c.bodyErr == nil
	var br bytes.Reader
	body := c.bodySource(&br)
	if streamed {
		// A streamed body: bound it here as Body does.
		body = &limitReader{r: body, limit: c.server.cfg.MaxRequestBodySize}
	}
	f, err := multipart.NewReader(body, boundary).ReadForm(maxMemory)
	if err != nil {
		var he *HTTPError
		var sc interface{ StatusCode() int } // a protocol error reading the body
		switch {
		case errors.As(err, &he):
			return nil, he
		case errors.As(err, &sc):
			return nil, bodyError(err)
		case errors.Is(err, multipart.ErrMessageTooLarge):
			return nil, &HTTPError{Code: http.StatusRequestEntityTooLarge, Message: "multipart form too large", Err: err}
		default:
			return nil, &HTTPError{Code: http.StatusBadRequest, Message: "malformed multipart form: " + err.Error(), Err: err}
		}
	}
	return f, nil
}

// FormFile returns the first file of the multipart form field name. A missing file
// is a 400 *HTTPError wrapping http.ErrMissingFile; other errors are those of
// MultipartForm.
func (c *Context) FormFile(name string) (*multipart.FileHeader, error) {
	f, err := c.MultipartForm(c.formMemory())
	if err != nil {
		return nil, err
	}
	if fhs := f.File[name]; len(fhs) > 0 {
		return fhs[0], nil
	}
	return nil, &HTTPError{Code: http.StatusBadRequest, Message: "missing form file " + strconv.Quote(name), Err: http.ErrMissingFile}
}

// limitReader fails with a 413 *HTTPError once more than limit bytes were read.
type limitReader struct {
	r     io.Reader
	limit int64
	n     int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n > l.limit {
		return 0, errBodyTooLarge()
	}
	if rem := l.limit + 1 - l.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.limit {
		return n - int(l.n-l.limit), errBodyTooLarge()
	}
	return n, err
}
