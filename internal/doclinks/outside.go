package doclinks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// The repository stands alone: a newcomer who clones it can follow every
// reference in it. A rule is stated in docs/ (or in the OpenAPI document)
// and cited there, never in a working document kept beside the checkout.

// OutsideRef is one line that names a file outside the repository.
type OutsideRef struct {
	File string // slash-separated, relative to the root
	Line int    // 1-based
	Ref  string // what the line names
}

func (o OutsideRef) String() string {
	return fmt.Sprintf("%s:%d: names %q, which is not in the repository: state the rule in docs/ (or the OpenAPI document) and link there", o.File, o.Line, o.Ref)
}

// outside matches what names a file outside the repository: the upper-case
// working documents the project was built from (the contract, with or
// without its .md, and the design notes) and paths into the directories
// around a checkout (a sibling shared directory, the work area). The
// pattern is assembled from pieces so that this file does not match it.
// Each alternative captures the reference itself.
var outside = regexp.MustCompile(strings.Join([]string{
	`\b(` + strings.ToUpper("contract") + `(?:\.md)?)\b`,
	`\b(` + strings.ToUpper("design") + `\.md)\b`,
	`(?:^|[^\w.~-])((?:\.\./)+` + "shared" + `)\b`,
	`(?:^|[^\w.~-])(/` + "work" + `/)`,
}, "|"))

// vendored reports whether a path is third-party or installed code, which
// the rule does not govern (a licence may well say "contract").
func vendored(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case ".git", "node_modules", "vendor":
			return true
		}
	}
	return false
}

// RepositoryFiles lists the repository's files under root: the tracked ones
// (git ls-files), or, where git or its metadata is missing, every file found
// by a walk. Vendored paths are left out either way.
func RepositoryFiles(root string) ([]string, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		return WalkFiles(root)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" && !vendored(f) {
			files = append(files, f)
		}
	}
	return files, nil
}

// WalkFiles lists every regular file under root, slash-separated and
// relative to it, without descending into vendored directories.
func WalkFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && vendored(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && !vendored(rel) {
			files = append(files, rel)
		}
		return nil
	})
	return files, err
}

// FindOutsideRefs reads each file (slash-separated, relative to root) and
// returns every line that names a file outside the repository. Binary files
// (a NUL byte in the first 8 KiB) are skipped, as are listed files that are
// gone or are not regular files (a deleted but still tracked file, a
// submodule).
func FindOutsideRefs(root string, files []string) ([]OutsideRef, error) {
	var refs []OutsideRef
	for _, file := range files {
		if vendored(file) {
			continue
		}
		full := filepath.Join(root, filepath.FromSlash(path.Clean(file)))
		info, err := os.Stat(full)
		if errors.Is(err, fs.ErrNotExist) || err == nil && !info.Mode().IsRegular() {
			continue
		}
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(full)
		if err != nil {
			return nil, err
		}
		if bytes.IndexByte(b[:min(len(b), 8<<10)], 0) >= 0 {
			continue
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range outside.FindAllStringSubmatch(line, -1) {
				for _, ref := range m[1:] {
					if ref != "" {
						refs = append(refs, OutsideRef{File: file, Line: i + 1, Ref: ref})
						break
					}
				}
			}
		}
	}
	return refs, nil
}
