package hostile

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Seed drives the generated part of the values; fixed, so every run sends
// exactly the same requests.
const Seed = 32

// Text is one hostile string, named for the report.
type Text struct {
	Name  string
	Value string
}

// JSON is one hostile JSON value, named for the report.
type JSON struct {
	Name  string
	Value json.RawMessage
}

// Strings are the hostile values for whatever travels as text: path and
// query parameters, headers, form fields. By class: what PostgreSQL cannot
// store (NUL, invalid UTF-8), what misleads a reader (bidirectional
// overrides, control characters), sizes, numbers a parser may overflow on,
// other syntaxes, and a few random byte strings.
func Strings() []Text {
	out := append(unstorable(), []Text{
		{"RTL override", "abc\u202edef"},
		{"BOM and zero-width", "\ufeff\u200b\u2060"},
		{"control characters", "\x01\x1b[31m\x7f\u0085"},
		{"line breaks", "a\r\nb"},
		{"only spaces", "   "},
		{"empty", ""},
		{"huge", strings.Repeat("A", 100_000)},
		{"huge multibyte", strings.Repeat("€", 3_000)},
		{"negative", "-1"},
		{"zero", "0"},
		{"beyond int64", "99999999999999999999999"},
		{"fraction", "1.5"},
		{"exponent", "1e309"},
		{"NaN", "NaN"},
		{"SQL", "' OR '1'='1' --"},
		{"HTML", `"><script>alert(1)</script>`},
		{"percent", "%"},
		{"path traversal", "../../etc/passwd"},
		{"format verbs", "%s%n%x%v"},
		{"impossible date", "2026-02-30T25:61:61Z"},
	}...)
	return append(out, generated()...)
}

// unstorable are the strings PostgreSQL refuses in a text column: the
// class of every 500 the suite was written to end.
func unstorable() []Text {
	return []Text{
		{"NUL", "\x00"},
		{"NUL inside", "a\x00b"},
		{"invalid UTF-8", "\xff\xfe"},
		{"lone surrogate (CESU-8)", "\xed\xa0\x80"},
		{"truncated UTF-8", "caf\xc3"},
	}
}

// generated are a few strings of random bytes from Seed: whatever the fixed
// list did not think of, the same every run.
func generated() []Text {
	rng := rand.New(rand.NewPCG(Seed, Seed))
	out := make([]Text, 2)
	for i := range out {
		b := make([]byte, 1+rng.IntN(48))
		for j := range b {
			b[j] = byte(rng.IntN(256))
		}
		out[i] = Text{"random bytes #" + strconv.Itoa(i+1), string(b)}
	}
	return out
}

// Suffixes are hostile strings appended to a valid value (a URL, a name):
// a field that checks the start of its value, or its syntax, may still let
// them through to the database.
func Suffixes() []Text {
	return []Text{
		{"NUL", "\x00"},
		{"invalid UTF-8", "\xff\xfe"},
		{"lone surrogate (CESU-8)", "\xed\xa0\x80"},
		{"RTL override", "\u202e"},
		{"control characters", "\r\n\x01\x1b\x7f\u0085"},
		{"huge", strings.Repeat("A", 10_000)},
	}
}

// IDs are the hostile values of a path parameter that names an object:
// malformed, truncated or wrongly typed IDs, and strings of every class
// but numbers (an ID is not parsed as one). A parameter that is not an ID
// (an e-mail domain) gets the same, its unknown value a name it is not.
func IDs(valid string) []Text {
	prefix, _, isID := strings.Cut(valid, "_")
	unknown := "unknown-" + valid
	if isID {
		unknown = prefix + "_" + strings.Repeat("0", len(valid)-len(prefix)-1)
	}
	out := []Text{
		{"unknown id", unknown},
		{"upper case", strings.ToUpper(valid)},
		{"truncated", valid[:len(valid)-1]},
		{"one more", valid + "0"},
		{"other prefix", "xyz_" + strings.TrimPrefix(valid, prefix+"_")},
		{"prefix only", prefix + "_"},
		{"id and NUL", valid + "\x00"},
		{"id and query", valid + "?x=1"},
		{"dot segment", ".."},
	}
	out = append(out, unstorable()...)
	return append(out, []Text{
		{"RTL override", "abc\u202edef"},
		{"control characters", "\x01\x1b[31m\x7f"},
		{"huge", strings.Repeat("A", 10_000)},
		{"percent", "%"},
		{"path traversal", "../../etc/passwd"},
	}...)
}

// JSONValues are the hostile values of a JSON member: every JSON type, the
// strings above that JSON can carry, escapes Go decodes leniently (lone
// surrogates), numbers out of range, and a string larger than any body.
func JSONValues() []JSON {
	out := []JSON{
		{"null", raw(`null`)},
		{"true", raw(`true`)},
		{"zero", raw(`0`)},
		{"negative", raw(`-1`)},
		{"fraction", raw(`1.5`)},
		{"beyond float64", raw(`1e400`)},
		{"beyond int64", raw(`123456789012345678901234567890`)},
		{"lone high surrogate", raw(`"\ud800"`)},
		{"escaped NUL", raw(`"\u0000"`)},
		{"raw invalid UTF-8", raw("\"\xff\xfe\"")},
		{"larger than a body", raw(`"` + strings.Repeat("A", 70_000) + `"`)},
		{"empty array", raw(`[]`)},
		{"array of null", raw(`[null]`)},
		{"array of NUL", raw(`["\u0000"]`)},
		{"empty object", raw(`{}`)},
		{"object", raw(`{"a":"\u0000"}`)},
	}
	for _, s := range Strings() {
		if utf8.ValidString(s.Value) {
			b, _ := json.Marshal(s.Value) // a valid string always marshals
			out = append(out, JSON{"string: " + s.Name, b})
		}
	}
	return out
}

// suffixed is valid with each of Suffixes appended, as JSON strings; the
// ones JSON cannot carry as text (invalid UTF-8) are sent raw, and a lone
// surrogate as the escape that decoders repair.
func suffixed(valid string) []JSON {
	var out []JSON
	for _, s := range Suffixes() {
		b, _ := json.Marshal(valid + s.Value) // invalid UTF-8 becomes U+FFFD here
		if !utf8.ValidString(s.Value) {
			q, _ := json.Marshal(valid)
			b = append(append(q[:len(q)-1:len(q)-1], s.Value...), '"')
		}
		out = append(out, JSON{"its valid value and " + s.Name, b})
	}
	q, _ := json.Marshal(valid)
	out = append(out, JSON{"its valid value and an escaped lone surrogate", append(append(q[:len(q)-1:len(q)-1], `\ud800`...), '"')})
	return out
}

// Bodies are broken request bodies, each sent as the whole body of every
// operation that takes one.
func Bodies() []Text {
	return []Text{
		{"empty body", ""},
		{"truncated", `{"a":`},
		{"not an object", `[]`},
		{"JSON null", `null`},
		{"a string", `"x"`},
		{"trailing data", `{} {}`},
		{"duplicate members", `{"a":1,"a":2}`},
		{"invalid UTF-8", "{\"a\":\"\xff\"}"},
		{"byte order mark", "\ufeff{}"},
		{"deep nesting", strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000)},
		{"larger than 64 KiB", `{"a":"` + strings.Repeat("A", 70_000) + `"}`},
		{"NUL byte", "{\x00}"},
	}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }
