package celeris

// Problem details: RFC 9457 error answers (application/problem+json).
//
// DefaultErrorHandler answers with a problem details object when the request's
// Accept prefers one (PrefersProblem): application/problem+json or
// application/json ranked above text/plain by q-value, then by specificity;
// on a tie, and without Accept, it answers as before (text/plain with the
// status and message). ProblemErrorHandler answers every error as a problem.
// ProblemOf maps an error to the object sent: an *HTTPError by its code and
// message, Bind's and Validate's failures (a *BindError in the chain) with one
// member of "errors" per field, a *Problem as it is, anything else as 500 with
// nothing of the error sent. A handler's panic is answered the same way when
// the request prefers a problem.

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"

	"github.com/celeris-dev/celeris/internal/bytesconv"
)

// ProblemContentType is the media type of a problem details object (RFC 9457 §3).
const ProblemContentType = "application/problem+json"

// Problem is an RFC 9457 problem details object. A handler may return one as its
// error: the error handlers send it as it is (DefaultErrorHandler as text/plain
// with Detail, or Title when Detail is empty, unless Accept prefers problem+json).
type Problem struct {
	// Type is a URI reference that names the kind of problem; "" is sent as
	// "about:blank", whose Title is the status text (RFC 9457 §4.2.1).
	Type string
	// Title is a short summary of the kind of problem; "" is sent as the
	// status text.
	Title string
	// Status is the HTTP status code; one outside 400-599 (0 included) is
	// sent as 500.
	Status int
	// Detail explains this occurrence to the client ("" is left out).
	Detail string
	// Instance is a URI reference for this occurrence; "" is sent as the
	// request's path by the error handlers.
	Instance string
	// Errors lists the request fields that failed binding or validation.
	Errors []ProblemField
	// Extensions are extra members (RFC 9457 §3.2), written after the standard
	// ones in key order; keys that name a standard member are ignored.
	Extensions map[string]any
	// Err is the internal cause, never sent; logged as HTTPError.Err is.
	Err error
}

// ProblemField is one field of a binding or validation failure (FieldError).
type ProblemField struct {
	Field   string `json:"field"`           // the field's name in the request
	In      string `json:"in,omitempty"`    // FieldError.Source: query, form, header, param, json, default, validate
	Rule    string `json:"rule,omitempty"`  // the rule that failed ("required", "min")
	Param   string `json:"param,omitempty"` // the rule's parameter ("3" of min=3)
	Message string `json:"message"`         // FieldError.Error()
}

// NewProblem returns a Problem with the status and detail; type, title and
// instance take their defaults when sent.
func NewProblem(status int, detail string) *Problem {
	return &Problem{Status: status, Detail: detail}
}

// Error is "status title: detail" ("404 Not Found: no such user").
func (p *Problem) Error() string {
	s := p.title()
	if p.Detail != "" {
		s += ": " + p.Detail
	}
	return strconv.Itoa(p.status()) + " " + s
}

// Unwrap returns the internal cause.
func (p *Problem) Unwrap() error { return p.Err }

// StatusCode is the status the error handlers answer with.
func (p *Problem) StatusCode() int { return p.status() }

func (p *Problem) status() int {
	if p.Status < 400 || p.Status > 599 {
		return http.StatusInternalServerError
	}
	return p.Status
}

func (p *Problem) title() string {
	if p.Title != "" {
		return p.Title
	}
	return http.StatusText(p.status())
}

// problemWire is the member order of the JSON object.
type problemWire struct {
	Type     string         `json:"type"`
	Title    string         `json:"title"`
	Status   int            `json:"status"`
	Detail   string         `json:"detail,omitempty"`
	Instance string         `json:"instance,omitempty"`
	Errors   []ProblemField `json:"errors,omitempty"`
}

// MarshalJSON writes the object: type, title, status, detail, instance, errors,
// then the extensions in key order.
func (p *Problem) MarshalJSON() ([]byte, error) {
	w := problemWire{Type: p.Type, Title: p.title(), Status: p.status(), Detail: p.Detail,
		Instance: p.Instance, Errors: p.Errors}
	if w.Type == "" {
		w.Type = "about:blank"
	}
	b, err := json.Marshal(w)
	if err != nil || len(p.Extensions) == 0 {
		return b, err
	}
	keys := make([]string, 0, len(p.Extensions))
	for k := range p.Extensions {
		switch k {
		case "type", "title", "status", "detail", "instance", "errors":
		default:
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	b = b[:len(b)-1] // the closing brace
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(p.Extensions[k])
		if err != nil {
			return nil, err
		}
		b = append(append(append(append(b, ','), kb...), ':'), vb...)
	}
	return append(b, '}'), nil
}

// ProblemOf returns the problem details object the error handlers send for err
// (see the package's problem details notes): a *Problem in err's chain as it is;
// an *HTTPError's code, its message as Detail when it differs from the status
// text, and its *BindError's fields as Errors; an error that carries a status
// (StatusCode() int) with that status; anything else 500 with no detail, since
// an unexpected error's text is not for clients. Instance is left as found.
func ProblemOf(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	var he *HTTPError
	if errors.As(err, &he) {
		p = &Problem{Status: he.Code, Err: he.Err}
		if msg := he.message(); msg != http.StatusText(he.Code) {
			p.Detail = msg
		}
		var be *BindError
		if errors.As(he.Err, &be) {
			p.Detail = "the request has invalid fields"
			p.Errors = make([]ProblemField, len(be.Fields))
			for i, f := range be.Fields {
				p.Errors[i] = ProblemField{Field: f.Field, In: f.Source, Rule: f.Rule, Param: f.Param, Message: f.Error()}
			}
		}
		return p
	}
	return &Problem{Status: errorStatus(err), Err: err}
}

// PrefersProblem reports whether an Accept value prefers a problem details
// object (application/problem+json, or application/json, which such an object
// also is) to the text/plain answer: a higher q-value, or the same q-value for
// a more specific range (RFC 9110 §12.5.1). A tie, "*/*" and an absent Accept
// keep text/plain.
func PrefersProblem(accept string) bool {
	if accept == "" {
		return false
	}
	switch negotiate(accept, problemOffers) {
	case ProblemContentType, "application/json":
		return true
	}
	return false
}

var problemOffers = []string{"text/plain", ProblemContentType, "application/json"}

// ProblemErrorHandler is an ErrorHandler that answers every error with an RFC
// 9457 problem details object (application/problem+json; see ProblemOf), with
// Instance set to the request's path when empty. It logs as DefaultErrorHandler
// does. Set it as Config.ErrorHandler to answer so whatever Accept says.
func ProblemErrorHandler(c *Context, err error) {
	if c.Written() {
		return
	}
	p := ProblemOf(err)
	logProblem(c, err, p)
	writeProblem(c, p)
}

// logProblem logs err once, as DefaultErrorHandler does: the internal cause of
// an *HTTPError or *Problem at Error level for 5xx and Debug level below (not
// when it says it was logged); an unexpected error (500) at Error level.
func logProblem(c *Context, err error, p *Problem) {
	cause := p.Err
	if cause == nil || alreadyLogged(cause) {
		return
	}
	level := slog.LevelDebug
	switch {
	case p.status() >= 500:
		level = slog.LevelError
	case cause == err:
		return // a status-carrying error, as a refused streamed body: not logged
	}
	c.server.logger.Log(c.Context(), level, "celeris: handler error", "method", c.Method(), "path", c.Path(),
		"status", p.status(), "error", cause)
}

// writeProblem sends p, with Instance defaulting to the request's path.
func writeProblem(c *Context, p *Problem) {
	if p.Instance == "" {
		cp := *p
		cp.Instance = c.Path()
		p = &cp
	}
	b, err := p.MarshalJSON()
	if err != nil { // an extension that does not encode
		c.server.logger.Error("celeris: problem details", "method", c.Method(), "path", c.Path(), "error", err)
		b, _ = (&Problem{Status: http.StatusInternalServerError, Instance: p.Instance}).MarshalJSON()
	}
	_ = c.Blob(p.status(), ProblemContentType, b)
}

// problemFirst is DefaultErrorHandler's first step: it answers err as a problem
// when the request's Accept prefers one, or a returned *Problem as text/plain
// (its Detail, else its Title), and reports whether it answered. The answer
// depends on Accept, so it adds Vary: Accept.
func problemFirst(c *Context, err error) bool {
	c.AddHeader("Vary", "Accept")
	if PrefersProblem(c.Header("Accept")) {
		ProblemErrorHandler(c, err)
		return true
	}
	var p *Problem
	if !errors.As(err, &p) {
		return false
	}
	logProblem(c, err, p)
	msg := p.Detail
	if msg == "" {
		msg = p.title()
	}
	_ = c.Blob(p.status(), textPlain, []byte(msg))
	return true
}

// answerPanic answers a handler's panic (500): a problem when the request's
// Accept prefers one, else text/plain.
func answerPanic(c *Context) {
	if PrefersProblem(c.Header("Accept")) {
		writeProblem(c, &Problem{Status: http.StatusInternalServerError})
		return
	}
	_ = c.Blob(http.StatusInternalServerError, textPlain, bytesconv.S2B("Internal Server Error"))
}
