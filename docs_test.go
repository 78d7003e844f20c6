package celeris

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocsFences: every ``` fence in docs/*.md and README.md closes, and no
// fence with an info string (```go) appears inside an open block, where
// CommonMark reads it as text: the block it meant to open swallows what
// follows, and every later fence pairs wrongly, so the rest of the page renders
// inverted (code as text, text as code).
func TestDocsFences(t *testing.T) {
	files, _ := filepath.Glob("docs/*.md")
	files = append(files, "README.md")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		open := 0 // line of the open fence, 0 when none
		for i, line := range strings.Split(string(b), "\n") {
			trim := strings.TrimLeft(line, " ")
			if len(line)-len(trim) > 3 || !strings.HasPrefix(trim, "```") {
				continue
			}
			info := strings.TrimSpace(strings.TrimLeft(trim, "`"))
			switch {
			case open == 0:
				open = i + 1
			case info != "":
				t.Errorf("%s:%d: fence %q inside the block opened at line %d (close that one first)", name, i+1, trim, open)
			default:
				open = 0
			}
		}
		if open != 0 {
			t.Errorf("%s:%d: fence never closed", name, open)
		}
	}
}

var (
	guideHeading = regexp.MustCompile(`(?m)^## (\d+)\. (.*)$`)
	// "section 5", "sections 13 and 25", "sections 22 to 26", "(§3)"; not an
	// RFC's or another document's ("RFC 9110 §9.3.7", "BENCHMARKS.md section 8").
	guideSectionRef = regexp.MustCompile(`(RFC \d+,? |\.md,? )?(?:[Ss]ections? (\d+)(?: (and|to) (\d+))?|§(\d+))`)
	mdAnchorRef     = regexp.MustCompile(`\]\(#([^)]+)\)`)
	backticked      = regexp.MustCompile("`([^`]+)`")
	nameWords       = regexp.MustCompile(`[a-z0-9_]+`)
)

// TestGuideCrossReferences: every "section N" and "§N" of docs/guide.md names a
// section that exists, and when the line names code (`...`), at least one of
// those names appears in the section(s) it points to, so a reference to the
// wrong section is caught. Every "](#anchor)" link in docs/*.md names a heading
// of its file (GitHub's anchor form).
func TestGuideCrossReferences(t *testing.T) {
	b, err := os.ReadFile("docs/guide.md")
	if err != nil {
		t.Fatal(err)
	}
	guide := string(b)
	body := map[int]string{} // section number -> its text
	idx := guideHeading.FindAllStringSubmatchIndex(guide, -1)
	for i, m := range idx {
		n, _ := strconv.Atoi(guide[m[2]:m[3]])
		end := len(guide)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		if _, dup := body[n]; dup {
			t.Errorf("two sections numbered %d", n)
		}
		if n != i+1 {
			t.Errorf("section %d (%q) is the guide's %dth", n, guide[m[4]:m[5]], i+1)
		}
		body[n] = guide[m[0]:end]
	}
	// Each paragraph (or list item) in turn: the names a reference vouches for
	// are those between the previous reference (or the paragraph's start) and it.
	off := 0
	for _, para := range strings.Split(guide, "\n\n") {
		ln := strings.Count(guide[:off], "\n") + 1
		off += len(para) + 2
		para = strings.ReplaceAll(para, "\n", " ")
		prev := 0
		for _, mi := range guideSectionRef.FindAllStringSubmatchIndex(para, -1) {
			sub := func(k int) string {
				if mi[2*k] < 0 {
					return ""
				}
				return para[mi[2*k]:mi[2*k+1]]
			}
			if sub(1) != "" {
				continue // RFC 9110 §9.3.7, BENCHMARKS.md section 8
			}
			var nums []int
			if sub(2) != "" {
				a, _ := strconv.Atoi(sub(2))
				nums = append(nums, a)
				if sub(4) != "" {
					z, _ := strconv.Atoi(sub(4))
					if sub(3) == "and" {
						nums = append(nums, z)
					}
					for k := a + 1; sub(3) == "to" && k <= z; k++ {
						nums = append(nums, k)
					}
				}
			} else {
				a, _ := strconv.Atoi(sub(5))
				nums = append(nums, a)
			}
			var text strings.Builder
			for _, n := range nums {
				s, ok := body[n]
				if !ok {
					t.Errorf("guide.md:%d: %q: no section %d", ln, sub(0), n)
				}
				text.WriteString(s)
			}
			// A name matches by any of its words of four letters or more
			// (`basicauth.New` by "basicauth"), case-insensitively.
			before := para[prev:mi[0]]
			prev = mi[1]
			names := backticked.FindAllStringSubmatch(before, -1)
			target := strings.ToLower(text.String())
			found := len(names) == 0
			for _, name := range names {
				for _, w := range nameWords.FindAllString(strings.ToLower(name[1]), -1) {
					if len(w) >= 4 && strings.Contains(target, w) {
						found = true
					}
				}
			}
			if !found {
				t.Errorf("guide.md:%d: %q: none of the names before it appears there: %s", ln, sub(0), before)
			}
		}
	}

	files, _ := filepath.Glob("docs/*.md")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		anchors := map[string]bool{}
		for _, line := range strings.Split(string(b), "\n") {
			if h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
				anchors[githubAnchor(h)] = true
			}
		}
		for _, m := range mdAnchorRef.FindAllStringSubmatch(string(b), -1) {
			if !anchors[m[1]] {
				t.Errorf("%s: link to #%s, which no heading makes", name, m[1])
			}
		}
	}
}

// githubAnchor is the anchor GitHub gives a heading: lower case, spaces to
// '-', punctuation other than '-' and '_' dropped.
func githubAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 0x7f:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestArchitectureQuotesNoMeasurements: measurements live in BENCHMARKS.md,
// which stays short enough to read (450 lines), with a date and commit each;
// ARCHITECTURE.md describes the design and links to them. A figure of cost
// (instructions, a share of the CPU, time per request) in ARCHITECTURE.md
// would drift from the code it measured.
func TestArchitectureQuotesNoMeasurements(t *testing.T) {
	b, err := os.ReadFile("docs/BENCHMARKS.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 450 {
		t.Errorf("docs/BENCHMARKS.md has %d lines; keep it at 450 at most (older runs belong in docs/bench/)", n)
	}
	a, err := os.ReadFile("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	cost := regexp.MustCompile(`\d[\d,.]* ?(instructions|% of (the|a) (CPU|short)|µs (a|per) request|ns (a|per) request|k? ?requests? (a|per) (second|CPU))`)
	for i, line := range strings.Split(string(a), "\n") {
		if m := cost.FindString(line); m != "" {
			t.Errorf("docs/ARCHITECTURE.md:%d quotes a measurement (%q): put it in BENCHMARKS.md and link to it", i+1, m)
		}
	}
}
