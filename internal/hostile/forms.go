package hostile

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Browser is the target of the forms walk: a signed-in session.
type Browser struct {
	BaseURL string
	// Client carries the session (a cookie jar) and must not follow
	// redirects: a redirect is an answer of its own.
	Client *http.Client
	// Start are the pages the walk begins at; the links on them lead to
	// the rest.
	Start []string
	Known Known
	// MaxPages bounds the pages rendered (0: 200).
	MaxPages int
	// Require are form actions (IDs written {id}) the walk must find, so
	// that a form moved out of reach fails the suite instead of silently
	// going untested.
	Require []string
}

// WalkForms renders the pages reachable from Start, and posts hostile
// values into every field of every form on them, and into the IDs in their
// addresses, each time with the rest of the form as the page rendered it.
func WalkForms(ctx context.Context, t testing.TB, b Browser, rep *Report) error {
	base, err := url.Parse(b.BaseURL)
	if err != nil {
		return err
	}
	w := &formWalk{Browser: b, t: t, rep: rep, base: base}
	pages, forms, err := w.discover(ctx)
	if err != nil {
		return err
	}
	if len(forms) == 0 {
		return fmt.Errorf("hostile: no forms found on %d pages from %v", len(pages), b.Start)
	}
	for _, action := range b.Require {
		if !slices.ContainsFunc(sortedKeys(forms), func(k string) bool { return strings.Contains(k, " "+action+" ") }) {
			return fmt.Errorf("hostile: no form posts to %s on %d pages from %v", action, len(pages), b.Start)
		}
	}
	for _, path := range pages {
		w.pathIDs(ctx, http.MethodGet, path, nil)
	}
	for _, key := range sortedKeys(forms) {
		w.form(ctx, forms[key])
	}
	t.Logf("hostile: %d forms on %d pages", len(forms), len(pages))
	return nil
}

type formWalk struct {
	Browser
	t    testing.TB
	rep  *Report
	base *url.URL
	seq  int
}

// idRE finds the IDs in an address ("lnk_…", "whk_…").
var idRE = regexp.MustCompile(`\b[a-z]{2,4}_[0-9a-z]{26}\b`)

// discover renders every page reachable from Start (one per path, and one
// per path pattern: a thousand links have one link page) and returns their
// paths and their forms, one per action, method and fields.
func (w *formWalk) discover(ctx context.Context) ([]string, map[string]form, error) {
	maxPages := w.MaxPages
	if maxPages == 0 {
		maxPages = 200
	}
	seen := map[string]bool{}
	var queue, pages []string
	for _, s := range w.Start {
		seen[idRE.ReplaceAllString(s, "{id}")] = true
		queue = append(queue, s)
	}
	forms := map[string]form{}
	for len(queue) > 0 && len(pages) < maxPages {
		path := queue[0]
		queue = queue[1:]
		u, _ := w.base.Parse(path)
		resp, body, err := w.do(ctx, http.MethodGet, u.String(), "", nil)
		if err != nil {
			return nil, nil, err
		}
		if resp.StatusCode >= 500 {
			w.rep.fail(w.t, "forms: GET %s → %d (before any hostile value)", path, resp.StatusCode)
		}
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); resp.StatusCode != http.StatusOK || mt != "text/html" {
			continue
		}
		pages = append(pages, u.Path)
		p, err := parsePage(u, bytes.NewReader(body))
		if err != nil {
			return nil, nil, fmt.Errorf("hostile: parse %s: %w", path, err)
		}
		for _, f := range p.forms {
			if f.action.Host != w.base.Host {
				continue
			}
			forms[formKey(f)] = f
		}
		for _, l := range p.links {
			if key := idRE.ReplaceAllString(l.Path, "{id}"); l.Host == w.base.Host && isPage(l.Path) && !seen[key] {
				seen[key] = true
				queue = append(queue, l.Path)
			}
		}
	}
	slices.Sort(pages)
	return pages, forms, nil
}

// isPage reports whether a path is a signed-in page worth rendering: not the
// API, a static file, a download or signing out.
func isPage(path string) bool {
	for _, p := range []string{"/api/", "/static/", "/oauth/", "/.well-known/", "/problems", "/openapi.", "/docs", "/logout", "/mcp", "/metrics"} {
		if strings.HasPrefix(path, p) {
			return false
		}
	}
	last := path[strings.LastIndex(path, "/")+1:]
	return path != "/" && !strings.Contains(last, ".")
}

// formKey identifies a form: method, action (its IDs generalised, so the
// same form on every row counts once) and field names.
func formKey(f form) string {
	names := make([]string, 0, len(f.fields))
	for _, fl := range f.fields {
		names = append(names, fl.name)
	}
	slices.Sort(names)
	return f.method + " " + idRE.ReplaceAllString(f.action.Path, "{id}") + " " + strings.Join(slices.Compact(names), ",")
}

type pair struct{ name, value string }

// defaults are the values a person submits: the form as rendered, with a
// URL, an address or the minimum typed into what must not stay empty, the
// first box of a group ticked when none is, and the first submit button.
func (w *formWalk) defaults(f form) []pair {
	var out []pair
	ticked := map[string]bool{}
	for _, fl := range f.fields {
		if (fl.kind == "checkbox" || fl.kind == "radio") && fl.checked {
			ticked[fl.name] = true
		}
	}
	button := false
	for _, fl := range f.fields {
		v := fl.value
		switch fl.kind {
		case "button":
			if button {
				continue
			}
			button = true
		case "checkbox", "radio":
			if !fl.checked && ticked[fl.name] {
				continue
			}
			ticked[fl.name] = true
		case "url":
			if v == "" {
				v = w.Known.URL
			}
		case "email":
			if v == "" {
				w.seq++
				v = fmt.Sprintf("hostile%d@example.com", w.seq)
			}
		default:
			if v == "" && fl.required {
				v = filler(fl)
			}
		}
		out = append(out, pair{fl.name, v})
	}
	return out
}

// filler is a valid value for a required control left empty.
func filler(fl field) string {
	switch fl.kind {
	case "number", "range":
		if fl.min != "" {
			return fl.min
		}
		return "1"
	case "date":
		return "2099-01-01"
	case "datetime-local":
		return "2099-01-01T00:00"
	}
	return "hostile"
}

// form posts every hostile string into each of f's fields in turn.
func (w *formWalk) form(ctx context.Context, f form) {
	defaults := w.defaults(f)
	var names []string
	for _, p := range defaults {
		if !slices.Contains(names, p.name) {
			names = append(names, p.name)
		}
	}
	for _, fl := range f.fields { // unticked boxes are fields too
		if !slices.Contains(names, fl.name) {
			names = append(names, fl.name)
		}
	}
	for _, name := range names {
		for _, v := range Strings() {
			w.submit(ctx, f, f.action.Path, replace(defaults, name, v.Value), "field "+name+" = "+v.Name+" "+show(v.Value))
		}
		valid := value(defaults, name)
		if valid == "" {
			continue
		}
		for _, v := range Suffixes() {
			w.submit(ctx, f, f.action.Path, replace(defaults, name, valid+v.Value), "field "+name+" = its value and "+v.Name)
		}
	}
	w.pathIDs(ctx, f.method, f.action.Path, &f)
}

// value is name's first value in pairs.
func value(pairs []pair, name string) string {
	for _, p := range pairs {
		if p.name == name {
			return p.value
		}
	}
	return ""
}

// replace sets name to value (once) in the submitted pairs.
func replace(pairs []pair, name, value string) []pair {
	out := make([]pair, 0, len(pairs)+1)
	done := false
	for _, p := range pairs {
		if p.name != name {
			out = append(out, p)
		} else if !done {
			out, done = append(out, pair{name, value}), true
		}
	}
	if !done {
		out = append(out, pair{name, value})
	}
	return out
}

// pathIDs sends path with each ID in it replaced by hostile ones: a page
// GET, or f submitted with its defaults.
func (w *formWalk) pathIDs(ctx context.Context, method, path string, f *form) {
	for _, loc := range idRE.FindAllStringIndex(path, -1) {
		valid := path[loc[0]:loc[1]]
		for _, v := range IDs(valid)[:12] {
			bad := path[:loc[0]] + url.PathEscape(v.Value) + path[loc[1]:]
			what := "id " + valid + " = " + v.Name + " " + show(v.Value)
			if f == nil {
				w.submit(ctx, form{method: http.MethodGet}, bad, nil, what)
			} else {
				w.submit(ctx, *f, bad, w.defaults(*f), what)
			}
		}
	}
}

// submit sends one form submission (or page view) and checks the answer.
func (w *formWalk) submit(ctx context.Context, f form, path string, pairs []pair, what string) {
	w.rep.count("forms")
	u, err := w.base.Parse(path)
	if err != nil {
		u = &url.URL{Scheme: w.base.Scheme, Host: w.base.Host, Opaque: path}
	}
	var body []byte
	contentType := ""
	values := url.Values{}
	for _, p := range pairs {
		values.Add(p.name, p.value)
	}
	switch {
	case f.method == http.MethodGet:
		if len(pairs) > 0 {
			u.RawQuery = values.Encode()
		}
	case strings.HasPrefix(f.enctype, "multipart/"):
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for _, p := range pairs {
			_ = mw.WriteField(p.name, p.value)
		}
		_ = mw.Close()
		body, contentType = buf.Bytes(), mw.FormDataContentType()
	default:
		body, contentType = []byte(values.Encode()), "application/x-www-form-urlencoded"
	}
	target := u.String()
	if u.Opaque != "" {
		target = w.BaseURL + path
	}
	resp, b, err := w.do(ctx, f.method, target, contentType, body)
	if err != nil {
		w.rep.fail(w.t, "forms %s %s: %s: %v", f.method, path, what, err)
		return
	}
	status := resp.StatusCode
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case status >= 500:
		w.rep.fail(w.t, "forms %s %s: %s → %d", f.method, path, what, status)
	case status >= 400 && mt != "text/html":
		w.rep.fail(w.t, "forms %s %s: %s → %d %s, want an HTML page", f.method, path, what, status, resp.Header.Get("Content-Type"))
	case status == http.StatusUnprocessableEntity && !shownError.Match(b):
		w.rep.fail(w.t, "forms %s %s: %s → 422 without a message at a field or an error page: %s", f.method, path, what, excerpt(b))
	}
}

// shownError finds a field's message or an error page in HTML.
var shownError = regexp.MustCompile(`data-testid="[a-z0-9-]*-error"|data-testid="error-page"`)

func (w *formWalk) do(ctx context.Context, method, target, contentType string, body []byte) (*http.Response, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, r)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "text/html")
	if method == http.MethodPost {
		// What a browser sends with a form posted from one of the
		// service's own pages.
		req.Header.Set("Origin", w.BaseURL)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("Content-Type", contentType)
	}
	return fetch(w.Client, req)
}
