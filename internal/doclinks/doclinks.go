// Package doclinks checks the repository's Markdown: every relative link
// must name an existing file, and every #fragment a heading of its target
// (GitHub-style slugs). The documentation is split over several files that
// cite each other's sections, so moving or renaming a section must fail a
// test rather than leave a reader at a dead link. And no tracked file may
// cite a document outside the repository (FindOutsideRefs): a rule lives in
// docs/, where whoever clones the repository can read it.
package doclinks

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Broken is one link that does not resolve.
type Broken struct {
	File   string // as given to Check
	Line   int    // 1-based
	Link   string // the link's destination as written
	Reason string
}

func (b Broken) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", b.File, b.Line, b.Link, b.Reason)
}

var (
	heading   = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	fence     = regexp.MustCompile("^ {0,3}(```+|~~~+)")
	inlineURL = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refDef    = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$`)
	htmlAnchr = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	scheme    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	mdLink    = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag   = regexp.MustCompile(`<[^>]+>`)
)

// Check reads each file (a slash-separated path relative to root) and
// returns the links in it that do not resolve. Links with a scheme
// (https:, mailto:) are not followed; a fragment is checked only when the
// target is a Markdown file.
func Check(root string, files []string) ([]Broken, error) {
	anchors := map[string]map[string]bool{} // by cleaned path relative to root
	anchorsOf := func(rel string) (map[string]bool, error) {
		if a, ok := anchors[rel]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		a := Anchors(string(b))
		anchors[rel] = a
		return a, nil
	}
	var broken []Broken
	for _, file := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			return nil, err
		}
		for _, l := range links(string(b)) {
			reason, err := resolve(root, file, l.dest, anchorsOf)
			if err != nil {
				return nil, err
			}
			if reason != "" {
				broken = append(broken, Broken{File: file, Line: l.line, Link: l.dest, Reason: reason})
			}
		}
	}
	return broken, nil
}

// resolve says why dest, written in file, does not resolve ("" when it does).
func resolve(root, file, dest string, anchorsOf func(string) (map[string]bool, error)) (string, error) {
	if dest == "" || scheme.MatchString(dest) || strings.HasPrefix(dest, "//") {
		return "", nil
	}
	p, frag, _ := strings.Cut(dest, "#")
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	target := file
	if p != "" {
		if strings.HasPrefix(p, "/") { // GitHub resolves these from the repository's root
			target = path.Clean(strings.TrimPrefix(p, "/"))
		} else {
			target = path.Join(path.Dir(file), p)
		}
		if strings.HasPrefix(target, "../") || target == ".." {
			return "leaves the repository", nil
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
			return "no such file", nil
		}
	}
	if frag == "" || !strings.HasSuffix(strings.ToLower(target), ".md") {
		return "", nil
	}
	a, err := anchorsOf(target)
	if err != nil {
		return "", err
	}
	if !a[frag] {
		return fmt.Sprintf("no heading #%s in %s", frag, target), nil
	}
	return "", nil
}

// stripCodeSpans removes the code spans of a line: a run of backticks up to
// the next run of the same length (an unmatched run stays literal text).
func stripCodeSpans(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := i
		for n < len(line) && line[n] == '`' {
			n++
		}
		run := line[i:n]
		end := -1
		for j := n; j < len(line); {
			k := strings.Index(line[j:], run)
			if k < 0 {
				break
			}
			k += j
			e := k + len(run)
			if e == len(line) || line[e] != '`' {
				end = e
				break
			}
			for e < len(line) && line[e] == '`' {
				e++
			}
			j = e
		}
		if end < 0 {
			b.WriteString(run)
			i = n
			continue
		}
		i = end
	}
	return b.String()
}

type link struct {
	line int
	dest string
}

// links returns the destinations of the inline links, images and reference
// definitions outside code blocks and code spans.
func links(md string) []link {
	var out []link
	eachProseLine(md, func(n int, line string) {
		if m := refDef.FindStringSubmatch(line); m != nil {
			out = append(out, link{n, m[1]})
			return
		}
		for _, m := range inlineURL.FindAllStringSubmatch(stripCodeSpans(line), -1) {
			out = append(out, link{n, m[1]})
		}
	})
	return out
}

// Anchors returns the fragments a Markdown document can be linked to: the
// GitHub-style slug of each ATX heading (a repeated one gets -1, -2, …) and
// the names of explicit <a name|id="…"> anchors.
func Anchors(md string) map[string]bool {
	a := map[string]bool{}
	seen := map[string]int{}
	eachProseLine(md, func(_ int, line string) {
		for _, m := range htmlAnchr.FindAllStringSubmatch(line, -1) {
			a[m[1]] = true
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			return
		}
		s := Slug(m[2])
		if n := seen[s]; n > 0 {
			a[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			a[s] = true
		}
		seen[s]++
	})
	return a
}

// Slug is GitHub's anchor for a heading's text: the rendered text lower-cased,
// every character that is not a letter, digit, mark, '-' or '_' dropped,
// and each space turned into '-'.
func Slug(text string) string {
	text = mdLink.ReplaceAllString(text, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// eachProseLine calls f with each line (and its 1-based number) that is
// not inside a fenced code block.
func eachProseLine(md string, f func(n int, line string)) {
	var open string // the fence that opened the current code block
	for i, line := range strings.Split(md, "\n") {
		line = strings.TrimRight(line, "\r")
		if m := fence.FindStringSubmatch(line); m != nil {
			switch {
			case open == "":
				open = m[1]
				continue
			case m[1][0] == open[0] && len(m[1]) >= len(open) && strings.TrimSpace(line[strings.Index(line, m[1])+len(m[1]):]) == "":
				open = ""
				continue
			}
		}
		if open == "" {
			f(i+1, line)
		}
	}
}
