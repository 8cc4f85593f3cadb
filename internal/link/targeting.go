package link

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/geo"
	"github.com/linkqr/linkqr/internal/validate"
	"github.com/linkqr/linkqr/internal/wire"
)

// Limits of targeting (docs/targeting.md#bounds).
const (
	MaxRules           = 20
	MinSplitVariants   = 2
	MaxSplitVariants   = 5
	MaxConditionValues = 50  // values in one condition list
	MaxPasswordBytes   = 128 // a poster's password, not a key
	MinPasswordChars   = 6   // what 20 guesses per link per 10 minutes cannot walk through
	MaxScanLimit       = 1_000_000_000_000
)

// Devices are the device values a rule may name: those a scan records
// (docs/targeting.md#what-the-redirect-does-in-order).
var Devices = []string{analytics.DeviceMobile, analytics.DeviceTablet, analytics.DeviceDesktop, analytics.DeviceBot, analytics.DeviceOther}

// OSNames are the OS values a rule may name: those a scan records
// (analytics.OSNames).
var OSNames = analytics.OSNames()

// CanonicalDevice is the device class s names in any case and with
// surrounding spaces ("Mobile " → "mobile"); false when it names none.
// People's forms go through it before ParseRules, which takes only the
// exact spelling (the API's rule).
func CanonicalDevice(s string) (string, bool) { return canonicalName(s, Devices) }

// CanonicalOS is the OS s names in any case ("ios" → "iOS"), as
// CanonicalDevice.
func CanonicalOS(s string) (string, bool) { return canonicalName(s, OSNames) }

// CanonicalCountry is the country code s names in any case ("at" → "AT"),
// as CanonicalDevice.
func CanonicalCountry(s string) (string, bool) {
	c, ok := geo.ParseCountry(strings.TrimSpace(s))
	return c.String(), ok
}

func canonicalName(s string, names []string) (string, bool) {
	s = strings.TrimSpace(s)
	for _, n := range names {
		if strings.EqualFold(n, s) {
			return n, true
		}
	}
	return "", false
}

// Condition is a rule's "if": every non-empty list must contain the
// visitor's value. At least one list is set (an empty condition would
// match everyone and hide every rule after it).
type Condition struct {
	Devices   []string
	OS        []string
	Countries []geo.Country
}

// Rule sends the visitors matching If to Target.
type Rule struct {
	If     Condition
	Target TargetURL
}

// Variant is one arm of an A/B split: Weight percent of the visitors.
type Variant struct {
	Target TargetURL
	Weight int
}

// Password is a link's password as the owner typed it; only its argon2id
// hash is ever stored.
type Password struct{ s string }

// String is the password itself (for hashing).
func (p Password) String() string { return p.s }

// ParsePassword accepts a password: at least 6 characters and at most 128
// bytes of text without control characters.
func ParsePassword(s string) (Password, error) {
	switch {
	case s == "":
		return Password{}, validate.Reject("must not be empty (send null to remove the password)")
	case utf8.RuneCountInString(s) < MinPasswordChars:
		return Password{}, validate.Reject(fmt.Sprintf("must be at least %d characters long", MinPasswordChars))
	case len(s) > MaxPasswordBytes:
		return Password{}, validate.Reject(fmt.Sprintf("must be at most %d bytes long", MaxPasswordBytes))
	case !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return Password{}, validate.Reject("must not contain control characters")
	}
	return Password{s}, nil
}

// ParseMaxScans accepts a scan limit: a whole number of at least 1.
func ParseMaxScans(n json.Number) (int64, error) {
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || v < 1 || v > MaxScanLimit {
		return 0, validate.Reject(fmt.Sprintf("must be a whole number from 1 to %d", int64(MaxScanLimit)))
	}
	return v, nil
}

// ParseRules reads a rules list decoded from JSON (with json.Number
// numbers), adding every refusal to errs under ptr ("/rules") with the
// exact place: "/rules/2/if/country/0". ok is false when anything was
// refused.
func ParseRules(v any, ptr string, errs *validate.Errors) (rules []Rule, ok bool) {
	before := len(*errs)
	list, isList := v.([]any)
	switch {
	case !isList:
		errs.Add(ptr, "must be a list of rules or null")
		return nil, false
	case len(list) > MaxRules:
		errs.Add(ptr, fmt.Sprintf("must have at most %d rules", MaxRules))
		return nil, false
	}
	rules = make([]Rule, 0, len(list))
	for i, item := range list {
		p := ptr + "/" + strconv.Itoa(i)
		obj, isObj := item.(map[string]any)
		if !isObj {
			errs.Add(p, `must be an object {"if": {…}, "target_url": "…"}`)
			continue
		}
		unknownMembers(obj, p, errs, "if", "target_url")
		r := Rule{Target: parseTargetMember(obj, p, errs)}
		r.If = parseCondition(obj["if"], obj, p+"/if", errs)
		rules = append(rules, r)
	}
	return rules, len(*errs) == before
}

func parseCondition(v any, parent map[string]any, ptr string, errs *validate.Errors) Condition {
	var c Condition
	if _, has := parent["if"]; !has {
		errs.Add(ptr, "is required")
		return c
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		errs.Add(ptr, `must be an object with device, os and/or country lists`)
		return c
	}
	unknownMembers(obj, ptr, errs, "device", "os", "country")
	if len(obj) == 0 {
		errs.Add(ptr, "must have at least one condition (device, os or country)")
		return c
	}
	c.Devices = parseValues(obj, "device", ptr, errs, func(s string) (string, error) { return exactly(s, CanonicalDevice, Devices) })
	c.OS = parseValues(obj, "os", ptr, errs, func(s string) (string, error) { return exactly(s, CanonicalOS, OSNames) })
	c.Countries = parseValues(obj, "country", ptr, errs, func(s string) (geo.Country, error) {
		if cc, ok := geo.ParseCountry(s); ok && s == cc.String() {
			return cc, nil
		}
		return geo.Unknown, validate.Reject("must be an ISO 3166-1 alpha-2 country code in capitals, such as DE")
	})
	return c
}

// exactly takes s when it is the canonical spelling of one of names.
func exactly(s string, canonical func(string) (string, bool), names []string) (string, error) {
	if c, ok := canonical(s); ok && c == s {
		return s, nil
	}
	return "", validate.Reject("must be one of " + strings.Join(names, ", "))
}

// parseValues reads one condition list (absent: nil).
func parseValues[T any](obj map[string]any, name, ptr string, errs *validate.Errors, parse func(string) (T, error)) []T {
	v, has := obj[name]
	if !has {
		return nil
	}
	p := ptr + "/" + name
	list, isList := v.([]any)
	switch {
	case !isList:
		errs.Add(p, "must be a list of strings")
		return nil
	case len(list) == 0:
		errs.Add(p, "must not be empty (leave the condition out instead)")
		return nil
	case len(list) > MaxConditionValues:
		errs.Add(p, fmt.Sprintf("must have at most %d values", MaxConditionValues))
		return nil
	}
	out := make([]T, 0, len(list))
	for i, item := range list {
		s, isStr := item.(string)
		if !isStr {
			errs.Add(p+"/"+strconv.Itoa(i), "must be a string")
			continue
		}
		x, err := parse(s)
		if errs.Check(p+"/"+strconv.Itoa(i), err) {
			out = append(out, x)
		}
	}
	return out
}

// ParseSplit reads a split decoded from JSON like ParseRules: 2 to 5
// variants whose weights (whole numbers 1-100) add up to 100.
func ParseSplit(v any, ptr string, errs *validate.Errors) (split []Variant, ok bool) {
	before := len(*errs)
	list, isList := v.([]any)
	switch {
	case !isList:
		errs.Add(ptr, "must be a list of variants or null")
		return nil, false
	case len(list) < MinSplitVariants || len(list) > MaxSplitVariants:
		errs.Add(ptr, fmt.Sprintf("must have %d to %d variants", MinSplitVariants, MaxSplitVariants))
		return nil, false
	}
	sum := 0
	for i, item := range list {
		p := ptr + "/" + strconv.Itoa(i)
		obj, isObj := item.(map[string]any)
		if !isObj {
			errs.Add(p, `must be an object {"target_url": "…", "weight": 1-100}`)
			continue
		}
		unknownMembers(obj, p, errs, "target_url", "weight")
		va := Variant{Target: parseTargetMember(obj, p, errs)}
		va.Weight = parseWeight(obj, p, errs)
		sum += va.Weight
		split = append(split, va)
	}
	if len(*errs) == before && sum != 100 {
		errs.Add(ptr, fmt.Sprintf("the weights must add up to 100 (they add up to %d)", sum))
	}
	return split, len(*errs) == before
}

func parseWeight(obj map[string]any, ptr string, errs *validate.Errors) int {
	v, has := obj["weight"]
	if !has {
		errs.Add(ptr+"/weight", "is required")
		return 0
	}
	n, isNum := v.(json.Number)
	w, err := strconv.Atoi(string(n))
	if !isNum || err != nil || w < 1 || w > 100 {
		errs.Add(ptr+"/weight", "must be a whole number from 1 to 100")
		return 0
	}
	return w
}

func parseTargetMember(obj map[string]any, ptr string, errs *validate.Errors) TargetURL {
	p := ptr + "/target_url"
	v, has := obj["target_url"]
	if !has {
		errs.Add(p, "is required")
		return TargetURL{}
	}
	s, isStr := v.(string)
	if !isStr {
		errs.Add(p, "must be a string")
		return TargetURL{}
	}
	u, err := ParseTargetURL(s)
	errs.Check(p, err)
	return u
}

func unknownMembers(obj map[string]any, ptr string, errs *validate.Errors, allowed ...string) {
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !slices.Contains(allowed, k) {
			errs.Add(ptr+"/"+escapePointer(k), "is not a known field")
		}
	}
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// RulesWire is a rules list as the link object shows it (nil: null).
func RulesWire(rules []Rule) []wire.Rule {
	if rules == nil {
		return nil
	}
	out := make([]wire.Rule, len(rules))
	for i, r := range rules {
		var countries []string
		for _, c := range r.If.Countries {
			countries = append(countries, c.String())
		}
		out[i] = wire.Rule{If: wire.RuleIf{Device: r.If.Devices, OS: r.If.OS, Country: countries}, TargetURL: r.Target.String()}
	}
	return out
}

// SplitWire is a split as the link object shows it (nil: null).
func SplitWire(split []Variant) []wire.Variant {
	if split == nil {
		return nil
	}
	out := make([]wire.Variant, len(split))
	for i, v := range split {
		out[i] = wire.Variant{TargetURL: v.Target.String(), Weight: v.Weight}
	}
	return out
}

// storedRules reads the rules column back; it was written from parsed
// values, so it is trusted.
func storedRules(raw []byte) []Rule {
	if raw == nil {
		return nil
	}
	var ws []wire.Rule
	if json.Unmarshal(raw, &ws) != nil {
		return nil
	}
	out := make([]Rule, len(ws))
	for i, w := range ws {
		r := Rule{Target: TargetURL{w.TargetURL}, If: Condition{Devices: w.If.Device, OS: w.If.OS}}
		for _, c := range w.If.Country {
			cc, _ := geo.ParseCountry(c)
			r.If.Countries = append(r.If.Countries, cc)
		}
		out[i] = r
	}
	return out
}

// storedSplit reads the split column back (trusted, as storedRules).
func storedSplit(raw []byte) []Variant {
	if raw == nil {
		return nil
	}
	var ws []wire.Variant
	if json.Unmarshal(raw, &ws) != nil {
		return nil
	}
	out := make([]Variant, len(ws))
	for i, w := range ws {
		out[i] = Variant{Target: TargetURL{w.TargetURL}, Weight: w.Weight}
	}
	return out
}

// rulesJSON and splitJSON are the columns' values (nil: NULL).
func rulesJSON(rules []Rule) []byte {
	if rules == nil {
		return nil
	}
	b, _ := json.Marshal(RulesWire(rules))
	return b
}

func splitJSON(split []Variant) []byte {
	if split == nil {
		return nil
	}
	b, _ := json.Marshal(SplitWire(split))
	return b
}
