package catalog

import (
	"strings"
	"testing"
)

func TestScenarioCheck(t *testing.T) {
	params, _ := LookupScenario("params")
	if err := params.Check(200, []byte("user=42 post=7")); err != nil {
		t.Errorf("good answer refused: %v", err)
	}
	if err := params.Check(200, []byte("user=42")); err == nil || !strings.Contains(err.Error(), "want") {
		t.Errorf("bad body accepted: %v", err)
	}
	if err := params.Check(404, []byte("user=42 post=7")); err == nil {
		t.Error("404 accepted")
	}
	dl, _ := LookupScenario("download")
	if dl.Check(200, make([]byte, DownloadSize)) != nil || dl.Check(200, make([]byte, 10)) == nil {
		t.Error("download length check is wrong")
	}
	up, _ := LookupScenario("upload")
	if len(up.Body()) != UploadSize || up.Want != "4096" {
		t.Errorf("upload body %d bytes, want %q", len(up.Body()), up.Want)
	}
}

func TestFrameworks(t *testing.T) {
	for _, name := range FrameworkNames() {
		f, ok := LookupFramework(name)
		if !ok || f.Supports(H1) == (f.WSOnly || f.H3Only) || f.Supports(WS) != f.WS || f.Supports(H3) != f.H3 {
			t.Errorf("%s: lookup %v, h1 %v, ws %v", name, ok, f.Supports(H1), f.Supports(WS))
		}
		for _, proto := range Protocols {
			if f.Supports(proto) && !f.Relevant(proto) {
				t.Errorf("%s speaks %s but is not in its tables", name, proto)
			}
		}
	}
	if f, _ := LookupFramework("fiber"); f.Supports(H2C) || f.Supports(H2TLS) || !f.Supports(H1TLS) {
		t.Errorf("fiber: h2c %v, h2tls %v, h1tls %v; want HTTP/1.1 only", f.Supports(H2C), f.Supports(H2TLS), f.Supports(H1TLS))
	}
	if f, _ := LookupFramework("nethttp"); !f.Supports(H1TLS) || !f.Supports(H2TLS) {
		t.Error("nethttp does not claim h1tls and h2tls")
	}
	if f, _ := LookupFramework("celeris-std"); !f.Supports(H1) || !f.Supports(H2C) || f.Relevant(H1TLS) || f.Relevant(H2TLS) {
		t.Error("celeris-std: want plaintext h1 and h2c only")
	}
	if q, _ := LookupFramework("quicgo"); !q.Relevant(H3) || q.Relevant(H1) || q.Relevant(H2TLS) || q.Relevant(WS) {
		t.Error("quicgo: want h3 only")
	}
	if c, _ := LookupFramework("celeris"); !c.Relevant(H3) {
		t.Error("celeris: not in the h3 tables")
	}
	if n, _ := LookupFramework("nethttp"); n.Relevant(H3) {
		t.Error("nethttp in the h3 tables")
	}
	if _, ok := LookupFramework("nope"); ok {
		t.Error("unknown framework found")
	}
	if FrameworkNames()[0] != Baseline {
		t.Errorf("the baseline %s is not listed first", Baseline)
	}
}

func TestWSScenarios(t *testing.T) {
	for _, sc := range Scenarios {
		ws := sc.Proto == WS
		if sc.For(WS) != ws || sc.For(H1) == ws || sc.For(H2C) == ws {
			t.Errorf("%s: For(ws)=%v For(h1)=%v", sc.Name, sc.For(WS), sc.For(H1))
		}
		if ws && (sc.Path != WSPath || len(sc.Message()) != sc.MsgSize || sc.MsgSize == 0) {
			t.Errorf("%s: path %s, message %d bytes", sc.Name, sc.Path, len(sc.Message()))
		}
	}
	if c, _ := LookupFramework("celeris"); !c.Relevant(H1) || !c.Relevant(WS) {
		t.Error("celeris is not in both the HTTP and the ws tables")
	}
	if g, _ := LookupFramework("gorilla"); g.Relevant(H1) || !g.Supports(WS) {
		t.Error("gorilla is not a ws-only peer")
	}
	if g, _ := LookupFramework("gin"); g.Relevant(WS) {
		t.Error("gin is in the ws tables")
	}
}
