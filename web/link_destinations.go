package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/geo"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/redirect"
	"github.com/linkqr/linkqr/internal/validate"
)

// The "Destinations" card of the link page (docs/targeting.md):
// rules, split, password and scan limit, edited in one form that works
// without JavaScript. Adding, removing and moving rows are submit buttons
// of the same form (action=…): the page comes back with the change made
// and nothing saved, until "Save destinations".

// ruleRow is one rule as the form holds it: the devices and operating
// systems ticked (spelled as the rule stores them; a value the form does
// not offer stays as posted, to be refused), the countries as typed (codes
// upper-cased) and the target.
type ruleRow struct {
	Devices, OS     []string
	Country, Target string
	Error           string          // the row's first refusal, shown under it
	Invalid         map[string]bool // the refused fields: device, os, country, target
}

// variantRow is one split variant as the form holds it.
type variantRow struct {
	Target, Weight string
	Error          string
	Invalid        map[string]bool // target, weight
}

// destinationsForm is the card's form.
type destinationsForm struct {
	Rules         []ruleRow
	Split         []variantRow
	Password      string // a new password as this request posted it ("" keeps the current one); never the stored one
	ClearPassword bool
	HasPassword   bool // the link has one now
	MaxScans      string
	Errors        FieldErrors // "/rules", "/split", "/password", "/max_scans"
}

// destinationsFormOf is the card filled in with the link as it is.
func destinationsFormOf(l link.Link) destinationsForm {
	f := destinationsForm{HasPassword: l.PasswordHash != "", Errors: FieldErrors{}}
	for _, r := range l.Rules {
		countries := make([]string, len(r.If.Countries))
		for i, c := range r.If.Countries {
			countries[i] = c.String()
		}
		f.Rules = append(f.Rules, ruleRow{
			Devices: r.If.Devices, OS: r.If.OS, Country: strings.Join(countries, ", "), Target: r.Target.String(),
		})
	}
	for _, v := range l.Split {
		f.Split = append(f.Split, variantRow{Target: v.Target.String(), Weight: strconv.Itoa(v.Weight)})
	}
	if l.MaxScans != nil {
		f.MaxScans = strconv.FormatInt(*l.MaxScans, 10)
	}
	return f
}

// destinationsFormFrom reads the posted card. Each rule's devices and
// operating systems are ticked boxes (several values of one name; a value
// may also be a comma-separated list) and its countries a comma- or
// space-separated list; all are matched in any case and spelled as the
// rule stores them (link.CanonicalDevice, CanonicalOS, CanonicalCountry).
func destinationsFormFrom(r *http.Request, l link.Link) destinationsForm {
	f := destinationsForm{HasPassword: l.PasswordHash != "", Errors: FieldErrors{}}
	n, _ := strconv.Atoi(r.PostFormValue("rules"))
	for i := range min(max(n, 0), link.MaxRules+1) {
		p := "rule" + strconv.Itoa(i) + "_"
		f.Rules = append(f.Rules, ruleRow{
			Devices: canonicalValues(r.PostForm[p+"device"], link.CanonicalDevice),
			OS:      canonicalValues(r.PostForm[p+"os"], link.CanonicalOS),
			Country: strings.Join(canonicalValues([]string{r.PostFormValue(p + "country")}, link.CanonicalCountry), ", "),
			Target:  trimmed(r, p+"target"),
		})
	}
	n, _ = strconv.Atoi(r.PostFormValue("variants"))
	for i := range min(max(n, 0), link.MaxSplitVariants+1) {
		p := "variant" + strconv.Itoa(i) + "_"
		f.Split = append(f.Split, variantRow{Target: trimmed(r, p+"target"), Weight: trimmed(r, p+"weight")})
	}
	f.Password = r.PostFormValue("password")
	f.ClearPassword = r.PostFormValue("clear_password") == "yes"
	f.MaxScans = trimmed(r, "max_scans")
	return f
}

// canonicalValues splits posted values at commas and semicolons and
// spells each as canonical does; one it does not know stays as posted
// (to be refused with its place, and shown again). A part of several
// words that are all known ("DE AT") counts as those values. Repeats are
// dropped.
func canonicalValues(posted []string, canonical func(string) (string, bool)) []string {
	var out []string
	add := func(v string) {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, p := range posted {
		for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == ',' || r == ';' }) {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			if c, ok := canonical(part); ok {
				add(c)
				continue
			}
			words := strings.Fields(part)
			known := make([]string, 0, len(words))
			for _, w := range words {
				if c, ok := canonical(w); ok {
					known = append(known, c)
				}
			}
			if len(words) > 1 && len(known) == len(words) {
				for _, c := range known {
					add(c)
				}
				continue
			}
			add(part)
		}
	}
	return out
}

// edit applies a row action (add, remove, move); false for "save".
func (f *destinationsForm) edit(action string) bool {
	verb, arg, _ := strings.Cut(action, ":")
	i, _ := strconv.Atoi(arg)
	switch {
	case verb == "add-rule" && len(f.Rules) < link.MaxRules:
		f.Rules = append(f.Rules, ruleRow{})
	case verb == "remove-rule" && i >= 0 && i < len(f.Rules):
		f.Rules = append(f.Rules[:i], f.Rules[i+1:]...)
	case verb == "up" && i > 0 && i < len(f.Rules):
		f.Rules[i-1], f.Rules[i] = f.Rules[i], f.Rules[i-1]
	case verb == "down" && i >= 0 && i+1 < len(f.Rules):
		f.Rules[i], f.Rules[i+1] = f.Rules[i+1], f.Rules[i]
	case verb == "add-variant" && len(f.Split) < link.MaxSplitVariants:
		if len(f.Split) == 0 {
			f.Split = []variantRow{{Weight: "50"}, {Weight: "50"}}
		} else {
			f.Split = append(f.Split, variantRow{Weight: "0"})
		}
	case verb == "remove-variant" && i >= 0 && i < len(f.Split):
		f.Split = append(f.Split[:i], f.Split[i+1:]...)
	case verb == "save" || verb == "":
		return false
	}
	return true
}

// input parses the form like the API parses JSON, so the same pointers
// come back ("/rules/2/if/country/0"), shown at their rows.
func (f *destinationsForm) input() (link.UpdateInput, error) {
	var (
		in   link.UpdateInput
		errs validate.Errors
	)
	rules := make([]any, 0, len(f.Rules))
	for _, r := range f.Rules {
		cond := map[string]any{}
		for name, vals := range map[string][]string{"device": r.Devices, "os": r.OS, "country": commaList(r.Country)} {
			if len(vals) > 0 {
				cond[name] = anyList(vals)
			}
		}
		rules = append(rules, map[string]any{"if": cond, "target_url": withScheme(r.Target)})
	}
	if len(rules) == 0 {
		in.Rules = link.Some[[]link.Rule](nil)
	} else if parsed, ok := link.ParseRules(rules, "/rules", &errs); ok {
		in.Rules = link.Some(parsed)
	}
	split := make([]any, 0, len(f.Split))
	for _, v := range f.Split {
		split = append(split, map[string]any{"target_url": withScheme(v.Target), "weight": json.Number(v.Weight)})
	}
	if len(split) == 0 {
		in.Split = link.Some[[]link.Variant](nil)
	} else if parsed, ok := link.ParseSplit(split, "/split", &errs); ok {
		in.Split = link.Some(parsed)
	}
	switch {
	case f.ClearPassword:
		in.Password = link.Some[*link.Password](nil)
	case f.Password != "":
		if p, err := link.ParsePassword(f.Password); errs.Check("/password", err) {
			in.Password = link.Some(&p)
		}
	}
	if f.MaxScans == "" {
		in.MaxScans = link.Some[*int64](nil)
	} else if n, err := link.ParseMaxScans(json.Number(f.MaxScans)); errs.Check("/max_scans", err) {
		in.MaxScans = link.Some(&n)
	}
	return in, errs.Err()
}

// place puts each refusal at its row, or on the card's section. A row
// shows its first refusal (under the row) and marks every refused field.
func (f *destinationsForm) place(err error) {
	var verrs validate.Errors
	if !errors.As(err, &verrs) {
		return
	}
	for _, e := range verrs {
		parts := strings.Split(strings.TrimPrefix(e.Pointer, "/"), "/")
		msg := fieldLabel(parts) + " " + e.Detail
		i := -1
		if len(parts) > 1 {
			i, _ = strconv.Atoi(parts[1])
		}
		switch {
		case parts[0] == "rules" && i >= 0 && i < len(f.Rules) && len(parts) > 1:
			row := &f.Rules[i]
			field := rowField(parts)
			switch field {
			case "if":
				msg = "Choose at least one device, operating system or country."
			case "country":
				// The form takes codes in any case: say which value is none.
				if k, err := strconv.Atoi(parts[len(parts)-1]); err == nil && len(parts) == 5 && k < len(commaList(row.Country)) {
					msg = fmt.Sprintf("%s must be an ISO 3166-1 alpha-2 country code such as DE (“%s” is not one)", fieldLabel(parts), commaList(row.Country)[k])
				}
			}
			if row.Error == "" {
				row.Error = asFullStop(msg)
			}
			row.Invalid = markInvalid(row.Invalid, field)
		case parts[0] == "split" && i >= 0 && i < len(f.Split) && len(parts) > 1:
			row := &f.Split[i]
			if row.Error == "" {
				row.Error = asFullStop(msg)
			}
			row.Invalid = markInvalid(row.Invalid, rowField(parts))
		default:
			f.Errors["/"+parts[0]] = joinMsg(f.Errors["/"+parts[0]], msg)
		}
	}
}

// rowField names the field of a row a pointer's parts refuse:
// ["rules","2","if","country","0"] → "country", […,"target_url"] →
// "target", ["split","1","weight"] → "weight", ["rules","0","if"] → "if".
func rowField(parts []string) string {
	for _, p := range parts[2:] {
		switch p {
		case "device", "os", "country", "weight":
			return p
		case "target_url":
			return "target"
		}
	}
	if len(parts) > 2 {
		return parts[2]
	}
	return ""
}

func markInvalid(m map[string]bool, field string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[field] = true
	return m
}

// fieldLabel names the refused part for people: "Country 1" of a rule's
// countries, "Target URL", "Weight".
func fieldLabel(parts []string) string {
	names := map[string]string{"device": "Devices", "os": "Operating systems", "country": "Countries", "target_url": "Target URL",
		"weight": "Weight", "if": "Conditions", "rules": "Rules", "split": "Split", "password": "Password", "max_scans": "Scan limit"}
	last := parts[len(parts)-1]
	if n, err := strconv.Atoi(last); err == nil && len(parts) > 2 {
		return fmt.Sprintf("%s, value %d,", names[parts[len(parts)-2]], n+1)
	}
	if s := names[last]; s != "" {
		return s
	}
	return "This"
}

// asFullStop ends a message with a full stop.
func asFullStop(s string) string {
	if strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}

func joinMsg(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// commaList splits "DE, AT" into its values.
func commaList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// anyList is a list as JSON decodes it, for link.ParseRules.
func anyList(vals []string) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return out
}

// linkDestinations answers the card's form: a row action re-renders the
// page with the change, "save" updates the link.
func (u *UI) linkDestinations(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	l, ok := u.loadLink(w, r)
	if !ok {
		return
	}
	f := destinationsFormFrom(r, l)
	if f.edit(r.PostFormValue("action")) {
		u.renderLinkWith(w, r, http.StatusOK, l, editFormOf(l), f, nil)
		return
	}
	in, err := f.input()
	if err != nil {
		f.place(err)
		u.renderLinkWith(w, r, http.StatusUnprocessableEntity, l, editFormOf(l), f, nil)
		return
	}
	updated, err := u.Links.Update(r.Context(), ws.ID, l.ID, in)
	if u.failed(w, r, err) {
		return
	}
	msg := "Nothing changed."
	if !updated.UpdatedAt.Equal(l.UpdatedAt) {
		msg = "Destinations saved: the next scan follows them."
	}
	u.redirectFlash(w, r, linkPath(ws, l.ID, "")+"#destinations", flashOK, msg)
}

// TestAsView is the card's "test as" preview: which destination a visitor
// of one device, OS and country would get now.
type TestAsView struct {
	Device, OS, Country string
	Ran                 bool
	Result              string // the URL, or a description of the split
	Variant             string // "rule 2", "the split", "the link's target"
	Error               string
}

// testAs answers the preview from the query (?test_device=&test_os=&test_country=).
func testAs(q url.Values, l link.Link) TestAsView {
	v := TestAsView{Device: q.Get("test_device"), OS: q.Get("test_os"), Country: strings.ToUpper(strings.TrimSpace(q.Get("test_country")))}
	if !q.Has("test_device") && !q.Has("test_os") && !q.Has("test_country") {
		v.Device, v.OS, v.Country = analytics.DeviceMobile, "iOS", "DE" // a phone in Germany
		return v
	}
	v.Ran = true
	visitor := redirect.Visitor{Client: analytics.Client{Device: v.Device, OS: v.OS}}
	if v.Country != "" {
		c, ok := geo.ParseCountry(v.Country)
		if !ok {
			v.Error = "The country must be a two-letter code such as DE."
			return v
		}
		visitor.Country = c
	}
	t := link.Target{LinkID: l.ID, URL: l.TargetURL.String(), Rules: l.Rules, Split: l.Split}
	for i := range t.Rules {
		rest := t
		rest.Rules, rest.Split = t.Rules[i:i+1], nil
		if _, variant := redirect.Choose(&rest, &visitor); variant != "" {
			v.Result, v.Variant = t.Rules[i].Target.String(), "rule "+strconv.Itoa(i+1)
			return v
		}
	}
	if len(l.Split) > 0 {
		parts := make([]string, len(l.Split))
		for i, s := range l.Split {
			parts[i] = strconv.Itoa(s.Weight) + " % " + s.Target.String()
		}
		v.Result, v.Variant = strings.Join(parts, " · "), "the split: each visitor keeps one variant all day"
		return v
	}
	v.Result, v.Variant = l.TargetURL.String(), "the link's target (no rule matches)"
	return v
}

// osChoices and deviceChoices are the values the rules and the preview
// offer; countryChoices the countries (code and English name) a rule's
// country field suggests.
func osChoices() []string     { return link.OSNames }
func deviceChoices() []string { return link.Devices }

type countryChoice struct{ Code, Name string }

func countryChoices() []countryChoice {
	list := geo.Countries()
	out := make([]countryChoice, len(list))
	for i, c := range list {
		out[i] = countryChoice{Code: c.String(), Name: geo.Name(c)}
	}
	return out
}

// withUnknown is choices followed by the ticked values it does not hold.
func withUnknown(choices, ticked []string) []string {
	out := choices
	for _, t := range ticked {
		if !slices.Contains(choices, t) {
			out = append(slices.Clip(out), t)
		}
	}
	return out
}

// testIDPart is a value as a piece of a test id: "Windows Phone" →
// "Windows-Phone".
func testIDPart(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '"' {
			return '-'
		}
		return r
	}, s)
}
