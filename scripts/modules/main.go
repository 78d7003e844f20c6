// Command modules works on the repository's Go modules as one release: the
// core module (the repository's root) and every module in a directory below
// it that has a go.mod of its own.
//
//	go run ./scripts/modules order            the module directories, each after the modules it requires
//	go run ./scripts/modules require VERSION  make every module require this repository's modules at VERSION
//	go run ./scripts/modules proxy DIR VERSION
//	    write a file-based module proxy (GOPROXY=file://DIR) that serves every
//	    module, as the working tree holds it, at VERSION
//
// Run it from the repository's root. scripts/release.sh tags a release with
// it; scripts/check-modproxy.sh builds every module from such a proxy, as a
// user outside this repository would.
package main

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// module is one of the repository's modules.
type module struct {
	Dir      string   // relative to the root, "." for the core
	Path     string   // module path
	Requires []string // paths of this repository's modules it requires
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "modules:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: modules order | require VERSION | proxy DIR VERSION")
	}
	mods, err := load()
	if err != nil {
		return err
	}
	switch {
	case args[0] == "order" && len(args) == 1:
		for _, m := range mods {
			fmt.Println(m.Dir)
		}
		return nil
	case args[0] == "require" && len(args) == 2:
		return require(mods, args[1])
	case args[0] == "proxy" && len(args) == 3:
		return proxy(mods, args[1], args[2])
	}
	return errors.New("usage: modules order | require VERSION | proxy DIR VERSION")
}

// load reads every go.mod of the working tree (git's tracked and untracked,
// not ignored, files) and returns the modules in dependency order.
func load() ([]module, error) {
	files, err := gitFiles()
	if err != nil {
		return nil, err
	}
	var mods []module
	for _, f := range files {
		if path.Base(f) != "go.mod" {
			continue
		}
		dir := path.Dir(f)
		out, err := exec.Command("go", "mod", "edit", "-json", f).Output()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		var gm struct {
			Module  struct{ Path string }
			Require []struct{ Path string }
		}
		if err := json.Unmarshal(out, &gm); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		m := module{Dir: dir, Path: gm.Module.Path}
		for _, r := range gm.Require {
			m.Requires = append(m.Requires, r.Path)
		}
		mods = append(mods, m)
	}
	ours := map[string]bool{}
	for _, m := range mods {
		ours[m.Path] = true
	}
	for i := range mods {
		var own []string
		for _, r := range mods[i].Requires {
			if ours[r] {
				own = append(own, r)
			}
		}
		mods[i].Requires = own
	}
	return order(mods)
}

// order sorts mods so that each comes after the modules it requires (by
// directory name among those that are ready together).
func order(mods []module) ([]module, error) {
	sort.Slice(mods, func(i, j int) bool { return mods[i].Dir < mods[j].Dir })
	done := map[string]bool{}
	var out []module
	for len(out) < len(mods) {
		progress := false
		for _, m := range mods {
			if done[m.Path] {
				continue
			}
			ready := true
			for _, r := range m.Requires {
				ready = ready && done[r]
			}
			if ready {
				out = append(out, m)
				done[m.Path] = true
				progress = true
			}
		}
		if !progress {
			return nil, errors.New("the modules require each other in a cycle")
		}
	}
	return out, nil
}

// require sets every module's requirement of this repository's modules to
// version (go mod edit -require; the replace lines stay).
func require(mods []module, version string) error {
	for _, m := range mods {
		for _, r := range m.Requires {
			cmd := exec.Command("go", "mod", "edit", "-require="+r+"@"+version)
			cmd.Dir = m.Dir
			cmd.Stderr = os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("%s: %v", m.Dir, err)
			}
		}
	}
	return nil
}

// proxy writes, under dir, the files a module proxy serves for each module at
// version (https://go.dev/ref/mod#goproxy-protocol): @v/list, .info, .mod and
// the .zip of the module's files (without nested modules' directories).
func proxy(mods []module, dir, version string) error {
	if err := requiresVersion(mods, version); err != nil {
		return err
	}
	files, err := gitFiles()
	if err != nil {
		return err
	}
	var nested []string
	for _, m := range mods {
		if m.Dir != "." {
			nested = append(nested, m.Dir+"/")
		}
	}
	info, _ := json.Marshal(struct{ Version, Time string }{version, time.Now().UTC().Format(time.RFC3339)})
	for _, m := range mods {
		v := filepath.Join(dir, filepath.FromSlash(escape(m.Path)), "@v")
		if err := os.MkdirAll(v, 0o755); err != nil {
			return err
		}
		gomod, err := os.ReadFile(filepath.Join(m.Dir, "go.mod"))
		if err != nil {
			return err
		}
		for name, b := range map[string][]byte{"list": []byte(version + "\n"), version + ".info": info, version + ".mod": gomod} {
			if err := os.WriteFile(filepath.Join(v, name), b, 0o644); err != nil {
				return err
			}
		}
		if err := writeZip(filepath.Join(v, version+".zip"), m, version, files, nested); err != nil {
			return fmt.Errorf("%s: %v", m.Dir, err)
		}
	}
	return nil
}

// requiresVersion checks that every module requires this repository's
// modules at version: the proxy serves that version only.
func requiresVersion(mods []module, version string) error {
	for _, m := range mods {
		if len(m.Requires) == 0 {
			continue
		}
		out, err := exec.Command("go", "mod", "edit", "-json", filepath.Join(m.Dir, "go.mod")).Output()
		if err != nil {
			return fmt.Errorf("%s: %v", m.Dir, err)
		}
		var gm struct {
			Require []struct{ Path, Version string }
		}
		if err := json.Unmarshal(out, &gm); err != nil {
			return fmt.Errorf("%s: %v", m.Dir, err)
		}
		for _, r := range gm.Require {
			if slices.Contains(m.Requires, r.Path) && r.Version != version {
				return fmt.Errorf("%s requires %s %s, not %s: run go run ./scripts/modules require %s", m.Dir, r.Path, r.Version, version, version)
			}
		}
	}
	return nil
}

// writeZip writes the module zip of m: its files, each named
// path@version/file, leaving out the files of the other modules below it.
func writeZip(name string, m module, version string, files, nested []string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	prefix := ""
	if m.Dir != "." {
		prefix = m.Dir + "/"
	}
	for _, file := range files {
		if !strings.HasPrefix(file, prefix) || inNested(file, prefix, nested) {
			continue
		}
		st, err := os.Lstat(file)
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the working tree, or a link
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		w, err := zw.Create(m.Path + "@" + version + "/" + strings.TrimPrefix(file, prefix))
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// inNested reports whether file, a file below the directory prefix ("" for
// the root), belongs to a module nested below it.
func inNested(file, prefix string, nested []string) bool {
	for _, n := range nested {
		if len(n) > len(prefix) && strings.HasPrefix(file, n) {
			return true
		}
	}
	return false
}

// escape is a module path as a proxy's URL holds it: an upper-case letter
// becomes '!' and the letter in lower case.
func escape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// gitFiles lists the working tree's files that git tracks or would track
// (untracked, not ignored), relative to the root.
func gitFiles() ([]string, error) {
	out, err := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"), nil
}
