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
		if !ok || !f.Supports(H1) {
			t.Errorf("%s: lookup %v, h1 %v", name, ok, f.Supports(H1))
		}
	}
	if f, _ := LookupFramework("fiber"); f.Supports(H2C) {
		t.Error("fiber claims h2c")
	}
	if _, ok := LookupFramework("nope"); ok {
		t.Error("unknown framework found")
	}
	if FrameworkNames()[0] != Baseline {
		t.Errorf("the baseline %s is not listed first", Baseline)
	}
}
