package browser_test

import (
	"html"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/celeristest/browser"
	"github.com/celeris-dev/celeris/middleware/csrf"
	"github.com/celeris-dev/celeris/middleware/session"
)

// bodyText reads the page's text ("" while there is no body yet).
const bodyText = `document.body ? document.body.innerText : ""`

// TestCSRFFormInChromium drives a CSRF-protected form in headless Chromium, as
// a user's test would: the form posted from its own page passes (Sec-Fetch-Site
// same-origin, with the token field), its handler's flash message shows on the
// page the POST redirects to, through the session cookie; the same form posted
// by another site's page is refused with 403 (csrf.ErrCrossOrigin).
func TestCSRFFormInChromium(t *testing.T) {
	chromium := browser.Chromium(t)
	keys := [][]byte{[]byte("0123456789abcdef0123456789abcdef")}
	quiet := celeris.Config{Logger: slog.New(slog.DiscardHandler)}
	_, app := celeristest.Serve(t, quiet, func(s *celeris.Server) {
		s.Use(csrf.New(csrf.Config{Token: true}), session.New(session.Config{Keys: keys}))
		s.GET("/notes", func(c *celeris.Context) error {
			sess, err := session.Get(c)
			if err != nil {
				return err
			}
			var b strings.Builder
			b.WriteString(`<!doctype html><meta charset="utf-8"><title>notes</title>`)
			for _, f := range sess.Flashes() {
				b.WriteString(`<p class="` + html.EscapeString(f.Kind) + `">` + html.EscapeString(f.Message) + `</p>`)
			}
			b.WriteString(`<form method="post" action="/notes"><input type="hidden" name="csrf_token" value="` +
				html.EscapeString(csrf.Token(c)) + `"><input name="title"><button>Add</button></form>`)
			return c.HTML(200, b.String())
		})
		s.POST("/notes", func(c *celeris.Context) error {
			sess, err := session.Get(c)
			if err != nil {
				return err
			}
			sess.AddFlash("info", "added "+c.FormValue("title"))
			return c.Redirect(303, "/notes")
		})
	})
	// Another site: its page posts the same form to the app.
	_, evil := celeristest.Serve(t, quiet, func(s *celeris.Server) {
		s.GET("/", func(c *celeris.Context) error {
			return c.HTML(200, `<!doctype html><form method="post" action="http://localhost:`+port(app)+`/notes">`+
				`<input name="title" value="forged"></form><script>document.forms[0].submit()</script>`)
		})
	})
	b := browser.Start(t, chromium)
	deadline := time.Now().Add(90 * time.Second)
	p, err := b.Open(deadline, "http://localhost:"+port(app)+"/notes")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Poll(deadline, `document.forms.length ? "form" : ""`, func(v string) (bool, error) { return v != "", nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Eval(deadline, `document.forms[0].title.value = "milk"; document.forms[0].submit(); "sent"`); err != nil {
		t.Fatal(err)
	}
	text, err := p.Poll(deadline, bodyText, func(v string) (bool, error) { return strings.Contains(v, "added"), nil })
	if err != nil || !strings.Contains(text, "added milk") {
		t.Fatalf("after the form's POST: %q %v", text, err)
	}
	// The flash was read: a reload does not show it again.
	// The old page is marked, so that Poll reads the reloaded one, which is not.
	if _, err := p.Eval(deadline, `window.oldPage = true; location.reload(); "reloading"`); err != nil {
		t.Fatal(err)
	}
	text, err = p.Poll(deadline, `!window.oldPage && document.forms.length ? document.body.innerText : ""`, func(v string) (bool, error) { return v != "", nil })
	if err != nil || strings.Contains(text, "added") {
		t.Errorf("after a reload: %q %v", text, err)
	}
	// Cross-site: 127.0.0.1 is another site than localhost, and the browser
	// says so (Sec-Fetch-Site: cross-site).
	q, err := b.Open(deadline, "http://127.0.0.1:"+port(evil)+"/")
	if err != nil {
		t.Fatal(err)
	}
	text, err = q.Poll(deadline, `location.pathname === "/notes" && document.body ? document.body.innerText : ""`,
		func(v string) (bool, error) { return v != "", nil })
	if err != nil || text != csrf.ErrCrossOrigin.Message {
		t.Errorf("the forged POST: %q %v", text, err)
	}
}

// port returns the port of a 127.0.0.1:port address.
func port(addr string) string { return addr[strings.LastIndexByte(addr, ':')+1:] }
