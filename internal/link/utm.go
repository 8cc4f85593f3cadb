package link

import (
	"net/url"
	"slices"
	"strings"

	"github.com/linkqr/linkqr/internal/text"
)

// MaxUTMChars is the longest value of one UTM parameter, in characters
// (docs/api.md#utm-parameters): campaign names are labels, not documents,
// and five of them percent-encoded keep the redirect's Location header far
// from the sizes proxies refuse.
const MaxUTMChars = 200

// UTMParam names one of the five campaign parameters a link carries.
type UTMParam int

// The UTM parameters, in the order they are shown and appended to a
// target.
const (
	UTMSource UTMParam = iota
	UTMMedium
	UTMCampaign
	UTMTerm
	UTMContent
	utmParamCount
)

// UTMParams lists the parameters in their order.
var UTMParams = [utmParamCount]UTMParam{UTMSource, UTMMedium, UTMCampaign, UTMTerm, UTMContent}

var utmNames = [utmParamCount]string{"utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"}

// Name is the parameter's name in the query, the API, CSV and the forms
// ("utm_source").
func (p UTMParam) Name() string { return utmNames[p] }

// UTMNames lists the parameters' names in their order.
func UTMNames() []string { return slices.Clone(utmNames[:]) }

// Label is the parameter as a form shows it ("Source").
func (p UTMParam) Label() string {
	return [utmParamCount]string{"Source", "Medium", "Campaign", "Term", "Content"}[p]
}

// UTMRule is what one parameter's value accepts: trimmed, at most
// MaxUTMChars characters of text without control characters.
var UTMRule = text.Rule{Max: MaxUTMChars, Trim: true}

// UTMValue is one parsed parameter value; the zero value is "absent".
type UTMValue struct{ s string }

// ParseUTMValue accepts one parameter's value (UTMRule). What is empty
// once trimmed is the zero UTMValue: the parameter is absent.
func ParseUTMValue(s string) (UTMValue, error) {
	t, err := UTMRule.Parse(s)
	if err != nil {
		return UTMValue{}, err
	}
	return UTMValue{t.String()}, nil
}

// String is the value ("" when absent).
func (v UTMValue) String() string { return v.s }

// UTM is a link's five campaign parameters, each absent or a parsed
// value. The zero UTM has none.
type UTM struct{ v [utmParamCount]string }

// Get is one parameter's value ("" when absent).
func (u UTM) Get(p UTMParam) string { return u.v[p] }

// With is u with p set to v (the zero v: absent).
func (u UTM) With(p UTMParam, v UTMValue) UTM {
	u.v[p] = v.s
	return u
}

// IsZero reports whether every parameter is absent.
func (u UTM) IsZero() bool { return u == UTM{} }

// Ptr is one parameter as a nullable string, for storage and the API
// (absent: nil).
func (u UTM) Ptr(p UTMParam) *string {
	if u.v[p] == "" {
		return nil
	}
	s := u.v[p]
	return &s
}

// StoredUTM reads five stored parameters back (a link's columns, a UTM
// template's), in UTMParams order, nil for absent. What the database holds
// was parsed when it was written, so it is trusted: it is for storage
// code, never for input.
func StoredUTM(source, medium, campaign, term, content *string) UTM {
	var u UTM
	for i, s := range []*string{source, medium, campaign, term, content} {
		if s != nil {
			u.v[i] = *s
		}
	}
	return u
}

// UTMPatch is a PATCH of some parameters: those set are replaced (the
// zero UTMValue removes one), the others kept.
type UTMPatch struct {
	set [utmParamCount]bool
	v   UTM
}

// Set marks p to become v.
func (p *UTMPatch) Set(param UTMParam, v UTMValue) {
	p.set[param] = true
	p.v = p.v.With(param, v)
}

// IsSet reports whether the patch changes param.
func (p UTMPatch) IsSet(param UTMParam) bool { return p.set[param] }

// Apply is u with the patch's parameters replaced.
func (p UTMPatch) Apply(u UTM) UTM {
	for _, param := range UTMParams {
		if p.set[param] {
			u.v[param] = p.v.v[param]
		}
	}
	return u
}

// Merge returns target with the parameters merged into its query
// (docs/api.md#utm-parameters): a parameter the query already has is
// replaced where it stands (any repetition of it dropped), the others
// keep their place and bytes, the missing ones are appended in UTMParams
// order, and the fragment stays last. Values are query-escaped. With no
// parameter set, target is returned unchanged, byte for byte. The
// redirect calls it once per target when its cache loads a link, never per
// request.
func (u UTM) Merge(target string) string {
	if u.IsZero() {
		return target
	}
	rest, fragment, hasFragment := strings.Cut(target, "#")
	base, query, _ := strings.Cut(rest, "?")
	var b strings.Builder
	b.Grow(len(target) + 64)
	b.WriteString(base)
	b.WriteByte('?')
	var written [utmParamCount]bool
	first := true
	add := func(s string) {
		if !first {
			b.WriteByte('&')
		}
		first = false
		b.WriteString(s)
	}
	for query != "" {
		var param string
		param, query, _ = strings.Cut(query, "&")
		if param == "" {
			continue // "a=1&&b=2": an empty parameter carries nothing
		}
		p, ours := u.owns(param)
		switch {
		case !ours:
			add(param)
		case !written[p]:
			add(u.pair(p))
			written[p] = true
		}
	}
	for _, p := range UTMParams {
		if u.v[p] != "" && !written[p] {
			add(u.pair(p))
		}
	}
	if hasFragment {
		b.WriteByte('#')
		b.WriteString(fragment)
	}
	return b.String()
}

// owns reports whether a raw query parameter ("utm_source=x", or
// percent-encoded "utm%5Fsource=x") is one of u's set parameters.
func (u UTM) owns(param string) (UTMParam, bool) {
	key, _, _ := strings.Cut(param, "=")
	if !strings.Contains(key, "utm") && !strings.Contains(key, "%") {
		return 0, false
	}
	if k, err := url.QueryUnescape(key); err == nil {
		key = k
	}
	for _, p := range UTMParams {
		if u.v[p] != "" && key == p.Name() {
			return p, true
		}
	}
	return 0, false
}

func (u UTM) pair(p UTMParam) string { return p.Name() + "=" + url.QueryEscape(u.v[p]) }
