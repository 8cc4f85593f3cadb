package link

import (
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/text"
)

func utmOf(t *testing.T, values ...string) UTM {
	t.Helper()
	var u UTM
	for i, s := range values {
		v, err := ParseUTMValue(s)
		if err != nil {
			t.Fatalf("ParseUTMValue(%q): %v", s, err)
		}
		u = u.With(UTMParams[i], v)
	}
	return u
}

// TestUTMMerge pins the merge rule of docs/api.md#utm-parameters case by case.
func TestUTMMerge(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, target string
		utm          []string // source, medium, campaign, term, content
		want         string
	}{
		{"no query", "https://example.com/menu", []string{"newsletter", "email"},
			"https://example.com/menu?utm_source=newsletter&utm_medium=email"},
		{"replace in place, keep others in order", "https://example.com/p?a=1&utm_source=old&b=2", []string{"new"},
			"https://example.com/p?a=1&utm_source=new&b=2"},
		{"replace and append", "https://example.com/menu?utm_source=old&lang=de#top", []string{"newsletter", "email"},
			"https://example.com/menu?utm_source=newsletter&lang=de&utm_medium=email#top"},
		{"repetitions dropped after the first", "https://e.com/?utm_source=a&x=1&utm_source=b", []string{"c"},
			"https://e.com/?utm_source=c&x=1"},
		{"fragment kept, no query", "https://e.com/p#section-2", []string{"", "", "spring"},
			"https://e.com/p?utm_campaign=spring#section-2"},
		{"a ? in the fragment is the fragment's", "https://e.com/p#frag?x=1", []string{"s"},
			"https://e.com/p?utm_source=s#frag?x=1"},
		{"empty query", "https://e.com/?", []string{"s"}, "https://e.com/?utm_source=s"},
		{"empty parameters dropped", "https://e.com/?a=1&&b=2&", []string{"s"}, "https://e.com/?a=1&b=2&utm_source=s"},
		{"encoded name matches", "https://e.com/?utm%5Fsource=old&q=a%20b", []string{"new"},
			"https://e.com/?utm_source=new&q=a%20b"},
		{"others' bytes untouched", "https://e.com/?q=%E2%9C%93&plus=a+b&semi=a;b&empty=", []string{"s"},
			"https://e.com/?q=%E2%9C%93&plus=a+b&semi=a;b&empty=&utm_source=s"},
		{"a parameter without value is replaced", "https://e.com/?utm_medium&x", []string{"", "cpc"},
			"https://e.com/?utm_medium=cpc&x"},
		{"names are case-sensitive", "https://e.com/?UTM_SOURCE=x", []string{"s"}, "https://e.com/?UTM_SOURCE=x&utm_source=s"},
		{"an unset parameter keeps the target's", "https://e.com/?utm_medium=print", []string{"s"},
			"https://e.com/?utm_medium=print&utm_source=s"},
		{"values escaped", "https://e.com/", []string{"a b&c=d", "é/ü", "100%", "x#y", "+plus"},
			"https://e.com/?utm_source=a+b%26c%3Dd&utm_medium=%C3%A9%2F%C3%BC&utm_campaign=100%25&utm_term=x%23y&utm_content=%2Bplus"},
		{"all five in order", "https://e.com/", []string{"1", "2", "3", "4", "5"},
			"https://e.com/?utm_source=1&utm_medium=2&utm_campaign=3&utm_term=4&utm_content=5"},
		{"none: unchanged", "https://e.com/a?utm_source=x&b#c", nil, "https://e.com/a?utm_source=x&b#c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := utmOf(t, c.utm...).Merge(c.target); got != c.want {
				t.Errorf("Merge(%q)\n got %q\nwant %q", c.target, got, c.want)
			}
		})
	}
}

// TestUTMMergeProperties: over random targets (a query of random
// parameters, some named like ours, percent-encoded or not, with or
// without a fragment) and random parameters, the merged URL parses, its
// query gives each set parameter exactly once with its value, keeps every
// other parameter in order and byte for byte, keeps path and fragment; no
// parameter set gives the target back byte for byte.
func TestUTMMergeProperties(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(47, 45))
	words := []string{"a", "b", "lang=de", "q=a%20b", "x=1+2", "utm_source=old", "utm_medium", "utm%5Fcampaign=enc", "UTM_TERM=up", "k=%E2%9C%93", "empty=", "s=a;b"}
	values := []string{"", "", "newsletter", "a b", "ü/é", "100%", "x&y=z", "#frag", " trimmed ", strings.Repeat("v", MaxUTMChars)}
	for i := 0; i < 2000; i++ {
		var params []string
		for n := rng.IntN(5); n > 0; n-- {
			params = append(params, words[rng.IntN(len(words))])
		}
		target := "https://example.com/p"
		if len(params) > 0 || rng.IntN(4) == 0 {
			target += "?" + strings.Join(params, "&")
		}
		fragment := ""
		if rng.IntN(2) == 0 {
			fragment = "frag-" + words[rng.IntN(len(words))]
			target += "#" + fragment
		}
		vals := make([]string, 5)
		for j := range vals {
			vals[j] = values[rng.IntN(len(values))]
		}
		utm := utmOf(t, vals...)
		got := utm.Merge(target)
		if utm.IsZero() {
			if got != target {
				t.Fatalf("no parameters: %q became %q", target, got)
			}
			continue
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("%q → %q does not parse: %v", target, got, err)
		}
		_, gotFragment, _ := strings.Cut(got, "#")
		if gotFragment != fragment || u.Path != "/p" || u.Host != "example.com" {
			t.Fatalf("%q → %q: path %q fragment %q", target, got, u.Path, gotFragment)
		}
		// ParseQuery refuses the target's own "s=a;b" (kept byte for byte,
		// as the target had it) but returns every other parameter.
		q, _ := url.ParseQuery(u.RawQuery)
		for _, p := range UTMParams {
			if v := utm.Get(p); v != "" && (len(q[p.Name()]) != 1 || q[p.Name()][0] != v) {
				t.Fatalf("%q → %q: %s = %q, want exactly [%q]", target, got, p.Name(), q[p.Name()], v)
			}
		}
		// The target's other parameters, in order and byte for byte.
		var want []string
		for _, prm := range params {
			if _, ours := utm.owns(prm); !ours {
				want = append(want, prm)
			}
		}
		var kept []string
		for _, prm := range strings.Split(u.RawQuery, "&") {
			if _, ours := utm.owns(prm); !ours {
				kept = append(kept, prm)
			}
		}
		if strings.Join(kept, "&") != strings.Join(want, "&") {
			t.Fatalf("%q → %q: other parameters %q, want %q", target, got, kept, want)
		}
	}
}

func TestParseUTMValue(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"newsletter": "newsletter", "  spring sale  ": "spring sale", "": "", "   ": "", "Café ✓": "Café ✓",
		strings.Repeat("é", MaxUTMChars): strings.Repeat("é", MaxUTMChars),
	} {
		v, err := ParseUTMValue(in)
		if err != nil || v.String() != want {
			t.Errorf("ParseUTMValue(%q) = %q, %v; want %q", in, v, err, want)
		}
	}
	for in, detail := range map[string]string{
		strings.Repeat("a", MaxUTMChars+1): "must be at most 200 characters long",
		"tab\there":                        text.DetailControl,
		"line\nbreak":                      text.DetailControl,
		"nul\x00":                          text.DetailControl,
		"bad\xff":                          text.DetailNotUTF8,
	} {
		if _, err := ParseUTMValue(in); err == nil || err.Error() != detail {
			t.Errorf("ParseUTMValue(%q) error %v, want %q", in, err, detail)
		}
	}
}

func TestUTMPatch(t *testing.T) {
	t.Parallel()
	before := utmOf(t, "a", "b", "c")
	var p UTMPatch
	p.Set(UTMMedium, UTMValue{})        // removed
	p.Set(UTMContent, UTMValue{s: "e"}) // added
	after := p.Apply(before)
	if after.Get(UTMSource) != "a" || after.Get(UTMMedium) != "" || after.Get(UTMCampaign) != "c" || after.Get(UTMContent) != "e" {
		t.Errorf("Apply = %+v", after)
	}
	if !p.IsSet(UTMMedium) || p.IsSet(UTMTerm) {
		t.Error("IsSet")
	}
	if (UTMPatch{}).Apply(before) != before {
		t.Error("an empty patch changed something")
	}
}

// FuzzUTMMerge: whatever the target (any valid one) and values, the merge
// keeps the target's scheme, host and path, never loses a fragment, and
// with no parameter returns the target itself.
func FuzzUTMMerge(f *testing.F) {
	f.Add("https://example.com/p?utm_source=x&a=1#f", "news", "", "spring")
	f.Add("http://e.com", "", "", "")
	f.Add("https://e.com/?&&", "a&b", "c=d", "#")
	f.Fuzz(func(t *testing.T, target, source, medium, campaign string) {
		tu, err := ParseTargetURL(target)
		if err != nil {
			return
		}
		var utm UTM
		for i, s := range []string{source, medium, campaign} {
			v, err := ParseUTMValue(s)
			if err != nil {
				return
			}
			utm = utm.With(UTMParams[i], v)
		}
		got := utm.Merge(tu.String())
		if utm.IsZero() {
			if got != target {
				t.Fatalf("unchanged expected: %q → %q", target, got)
			}
			return
		}
		rest, frag, hasFrag := strings.Cut(target, "#")
		base, _, _ := strings.Cut(rest, "?")
		if !strings.HasPrefix(got, base+"?") {
			t.Fatalf("%q → %q: base %q lost", target, got, base)
		}
		if hasFrag && !strings.HasSuffix(got, "#"+frag) {
			t.Fatalf("%q → %q: fragment %q lost", target, got, frag)
		}
		for _, p := range UTMParams {
			if v := utm.Get(p); v != "" && !strings.Contains(got, p.Name()+"="+url.QueryEscape(v)) {
				t.Fatalf("%q → %q: %s=%q missing", target, got, p.Name(), v)
			}
		}
	})
}
