package treecheck

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// root is the repository's root, relative to this package's directory.
const root = "../.."

// files lists the repository's files that git tracks or would track, relative
// to the root (the test skips outside a git checkout).
func files(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	var fs []string
	for _, f := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			fs = append(fs, f)
		}
	}
	return fs
}

// mdLink is an inline Markdown link or image: [text](target) or ![alt](target).
var mdLink = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)

// TestMarkdownLinksExist: a relative link in a Markdown file leads to a file or
// directory of the repository (a section link within a file, a URL or a mail
// address is left to others).
func TestMarkdownLinksExist(t *testing.T) {
	for _, f := range files(t) {
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		fh, err := os.Open(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		fence := false
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fence = !fence
			}
			if fence {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if i := strings.IndexByte(target, '#'); i >= 0 {
					target = target[:i]
				}
				if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				p := path.Join(path.Dir(f), target)
				if strings.HasPrefix(target, "/") {
					p = strings.TrimPrefix(target, "/")
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
					t.Errorf("%s:%d: link to %s: no such file", f, n, m[1])
				}
			}
		}
		fh.Close()
	}
}

// goFile is a Go source file's name in prose: "see adapt.go" (a path, as
// "interop/client/client.go" of another repository, is left alone).
var goFile = regexp.MustCompile(`(?:^|[^/A-Za-z0-9_.])([A-Za-z0-9_]+\.go)\b`)

// TestAPIDocNamesNoSourceFile: the documentation of an exported package,
// identifier, method or field names no source file. go doc and pkg.go.dev show
// it to users, for whom a file name says nothing and goes stale as the code
// moves; they describe what the API does. Comments inside the code, and the
// documentation of internal packages, may name files for the maintainers.
func TestAPIDocNamesNoSourceFile(t *testing.T) {
	fset := token.NewFileSet()
	for _, f := range files(t) {
		if !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") || isInternal(f) {
			continue
		}
		af, err := parser.ParseFile(fset, filepath.Join(root, f), nil, parser.ParseComments)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if af.Name.Name == "main" {
			continue // a command: its documentation is its usage
		}
		check := func(doc *ast.CommentGroup, what string) {
			if doc == nil {
				return
			}
			if m := goFile.FindStringSubmatch(doc.Text()); m != nil {
				t.Errorf("%s: the documentation of %s names the source file %s", fset.Position(doc.Pos()), what, m[1])
			}
		}
		check(af.Doc, "package "+af.Name.Name)
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && (d.Recv == nil || exportedRecv(d.Recv)) {
					check(d.Doc, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						doc := s.Doc
						if doc == nil && len(d.Specs) == 1 {
							doc = d.Doc
						}
						check(doc, s.Name.Name)
						checkFields(s, check)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								doc := s.Doc
								if doc == nil && len(d.Specs) == 1 {
									doc = d.Doc
								}
								check(doc, n.Name)
								break
							}
						}
					}
				}
			}
		}
	}
}

// checkFields checks the exported fields of a struct type and the methods of
// an interface type.
func checkFields(s *ast.TypeSpec, check func(*ast.CommentGroup, string)) {
	var list *ast.FieldList
	switch ty := s.Type.(type) {
	case *ast.StructType:
		list = ty.Fields
	case *ast.InterfaceType:
		list = ty.Methods
	}
	if list == nil {
		return
	}
	for _, fl := range list.List {
		for _, n := range fl.Names {
			if n.IsExported() {
				check(fl.Doc, s.Name.Name+"."+n.Name)
				break
			}
		}
	}
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(recv *ast.FieldList) bool {
	if len(recv.List) == 0 {
		return false
	}
	ty := recv.List[0].Type
	for {
		switch x := ty.(type) {
		case *ast.StarExpr:
			ty = x.X
		case *ast.IndexExpr:
			ty = x.X
		case *ast.IndexListExpr:
			ty = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

// isInternal reports whether the file is in an internal package (or under
// testdata), whose documentation only maintainers read.
func isInternal(f string) bool {
	for _, el := range strings.Split(path.Dir(f), "/") {
		if el == "internal" || el == "testdata" {
			return true
		}
	}
	return false
}

// reasonPending lists directories whose pauses do not say their reason yet:
// they are counted, and each is logged instead of failed. A directory leaves
// the list once its pauses say why (or are gone).
var reasonPending = map[string]bool{}

// maxSleeps bounds the pauses in the core module's tests: a new one must stand
// for no condition a test could wait for, or replace another.
const maxSleeps = 29

// TestSleepsSayWhy: a pause in the core module's tests (a call of time's Sleep,
// a bare receive from time.After, or a call of internal/testkit's Slow or
// Window, which sleep) stands for no condition
// the test could wait for (internal/testkit waits for those); each says why it
// must be a pause, in a comment on its line that starts "a sleep:", and there
// are at most maxSleeps.
func TestSleepsSayWhy(t *testing.T) {
	modules := map[string]bool{}
	for _, f := range files(t) {
		if path.Base(f) == "go.mod" && f != "go.mod" {
			modules[path.Dir(f)+"/"] = true
		}
	}
	// Split, so that this file does not count itself. A bare receive from
	// time.After is a sleep too.
	needles := []string{"time." + "Sleep(", "testkit." + "Slow(", "testkit." + "Window("}
	bareAfter := "<-time." + "After("
	count := 0
	byDir := map[string]int{}
outer:
	for _, f := range files(t) {
		if !strings.HasSuffix(f, "_test.go") {
			continue
		}
		for m := range modules {
			if strings.HasPrefix(f, m) {
				continue outer // another module's test
			}
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			code, _, _ := strings.Cut(line, "// ")
			for _, needle := range needles {
				if !strings.Contains(code, needle) && (needle != needles[0] || !strings.HasPrefix(strings.TrimSpace(code), bareAfter)) {
					continue
				}
				count++
				byDir[path.Dir(f)]++
				if !strings.Contains(line, "// a sleep: ") {
					report := t.Errorf
					if reasonPending[path.Dir(f)] {
						report = t.Logf
					}
					report("%s:%d: a pause without \"// a sleep: why\" (wait for the condition with internal/testkit instead)", f, n+1)
				}
			}
		}
	}
	dirs := make([]string, 0, len(byDir))
	for d, n := range byDir {
		dirs = append(dirs, fmt.Sprintf("%s %d", d, n))
	}
	sort.Strings(dirs)
	t.Logf("%d pauses in the core module's tests: %s", count, strings.Join(dirs, ", "))
	if count > maxSleeps {
		t.Errorf("%d pauses in the core module's tests, at most %d: wait for the condition with internal/testkit instead", count, maxSleeps)
	}
}
