package hostile

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// schema is a JSON Schema as decoded JSON, with the document it lives in so
// that local $refs ("#/components/schemas/Link") resolve. The OpenAPI
// document and the MCP tools' input schemas are read the same way.
type schema struct {
	root map[string]any
	m    map[string]any
}

// resolved follows $ref until a schema without one.
func (s schema) resolved() schema {
	for range 32 {
		ref, ok := s.m["$ref"].(string)
		if !ok {
			return s
		}
		target, ok := lookup(s.root, ref).(map[string]any)
		if !ok {
			return schema{root: s.root}
		}
		s.m = target
	}
	return s
}

// lookup resolves a local JSON pointer reference ("#/a/b") in root.
func lookup(root map[string]any, ref string) any {
	p, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	var cur any = root
	for _, tok := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[tok]
	}
	return cur
}

func (s schema) child(v any) schema {
	m, _ := v.(map[string]any)
	return schema{root: s.root, m: m}.resolved()
}

// types lists "type" (a string or, in OpenAPI 3.1, a list), null last.
func (s schema) types() []string {
	var out []string
	switch t := s.m["type"].(type) {
	case string:
		out = []string{t}
	case []any:
		for _, v := range t {
			if str, ok := v.(string); ok {
				out = append(out, str)
			}
		}
	}
	if len(out) == 0 {
		switch {
		case s.m["properties"] != nil:
			out = []string{"object"}
		case s.m["items"] != nil:
			out = []string{"array"}
		}
	}
	slices.SortStableFunc(out, func(a, b string) int {
		return boolInt(a == "null") - boolInt(b == "null")
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s schema) str(key string) string { v, _ := s.m[key].(string); return v }

func (s schema) num(key string) (float64, bool) { v, ok := s.m[key].(float64); return v, ok }

// properties lists an object schema's members in name order.
func (s schema) properties() []string {
	props, _ := s.m["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func (s schema) property(name string) schema {
	props, _ := s.m["properties"].(map[string]any)
	return s.child(props[name])
}

func (s schema) required() []string {
	var out []string
	list, _ := s.m["required"].([]any)
	for _, v := range list {
		if name, ok := v.(string); ok {
			out = append(out, name)
		}
	}
	return out
}

func (s schema) items() schema { return s.child(s.m["items"]) }

// Known are values a valid request needs that no schema can give: the IDs
// of objects that exist (by their prefix, "lnk"), a URL that accepts
// webhook deliveries and is a fine link target, values of object members
// by name (an OIDC issuer that answers discovery) and of path parameters
// that are not IDs (an e-mail domain the workspace holds).
type Known struct {
	IDs     map[string]string
	URL     string
	Members map[string]any
	Params  map[string]string
}

// valid builds a valid value for s: an object with its required members,
// an array with its minimum of items, a string from the schema's enum,
// format, examples or pattern. ok is false when it cannot tell.
func (k Known) valid(s schema) (any, bool) {
	s = s.resolved()
	if c, ok := s.m["const"]; ok {
		return c, true
	}
	if enum, ok := s.m["enum"].([]any); ok {
		for _, v := range enum {
			if v != nil {
				return v, true
			}
		}
	}
	types := s.types()
	if len(types) == 0 {
		return nil, false
	}
	switch types[0] {
	case "object":
		obj := map[string]any{}
		props, _ := s.m["properties"].(map[string]any)
		for name, v := range k.Members {
			if _, declared := props[name]; declared {
				obj[name] = v
			}
		}
		for _, name := range s.required() {
			if _, known := obj[name]; known {
				continue
			}
			v, ok := k.valid(s.property(name))
			if !ok {
				return nil, false
			}
			obj[name] = v
		}
		return obj, true
	case "array":
		n, _ := s.num("minItems")
		items := s.items()
		var out []any
		enum, _ := items.m["enum"].([]any)
		for i := range int(n) {
			if i < len(enum) { // distinct, for uniqueItems
				out = append(out, enum[i])
				continue
			}
			v, ok := k.valid(items)
			if !ok {
				return nil, false
			}
			out = append(out, v)
		}
		if out == nil {
			out = []any{}
		}
		return out, true
	case "integer", "number":
		for _, key := range []string{"default", "minimum"} {
			if v, ok := s.num(key); ok {
				return v, true
			}
		}
		return 1, true
	case "boolean":
		return false, true
	case "string":
		return k.validString(s)
	case "null":
		return nil, true
	}
	return nil, false
}

// validString picks a string for s: a known ID that matches its pattern, a
// URL for a URI, a time in the future for a date-time, else an example or
// a plain word that fits the pattern and length.
func (k Known) validString(s schema) (any, bool) {
	pattern := s.str("pattern")
	var re *regexp.Regexp
	if pattern != "" {
		var err error
		if re, err = regexp.Compile(pattern); err != nil {
			return nil, false
		}
	}
	fits := func(v string) bool {
		n := utf8.RuneCountInString(v)
		if lo, ok := s.num("minLength"); ok && float64(n) < lo {
			return false
		}
		if hi, ok := s.num("maxLength"); ok && float64(n) > hi {
			return false
		}
		return re == nil || re.MatchString(v)
	}
	var candidates []string
	if re != nil {
		for _, prefix := range sortedKeys(k.IDs) {
			candidates = append(candidates, k.IDs[prefix])
		}
	}
	switch s.str("format") {
	case "uri", "url":
		candidates = append(candidates, k.URL)
	case "date-time":
		candidates = append(candidates, "2099-01-01T00:00:00Z")
	case "email":
		candidates = append(candidates, "hostile@example.com")
	}
	for _, key := range []string{"examples", "example", "default"} {
		switch v := s.m[key].(type) {
		case []any:
			for _, e := range v {
				if str, ok := e.(string); ok {
					candidates = append(candidates, str)
				}
			}
		case string:
			candidates = append(candidates, v)
		}
	}
	candidates = append(candidates, "hostile", "hostile-baseline", "abc", "x")
	for _, c := range candidates {
		if fits(c) {
			return c, true
		}
	}
	return nil, false
}

// location is one place in a JSON value where a hostile value goes: a JSON
// pointer and the schema there.
type location struct {
	pointer string
	schema  schema
}

// hostileAt are the values sent to one location: every hostile JSON
// value, and for a string its valid value with hostile suffixes.
func (k Known) hostileAt(loc location) []JSON {
	values := JSONValues()
	if v, ok := k.valid(loc.schema); ok {
		if s, ok := v.(string); ok {
			values = append(values, suffixed(s)...)
		}
	}
	return values
}

// locations lists every member of s, nested objects and array items
// included, in a stable order.
func locations(s schema) []location {
	var out []location
	var walk func(pointer string, s schema, depth int)
	walk = func(pointer string, s schema, depth int) {
		s = s.resolved()
		if depth > 8 {
			return
		}
		if pointer != "" {
			out = append(out, location{pointer, s})
		}
		types := s.types()
		if slices.Contains(types, "object") {
			for _, name := range s.properties() {
				walk(pointer+"/"+escape(name), s.property(name), depth+1)
			}
		}
		if slices.Contains(types, "array") {
			walk(pointer+"/0", s.items(), depth+1)
		}
	}
	walk("", s, 0)
	return out
}

// with returns a copy of the valid value v with the member at pointer
// replaced by hostile (creating the member, or array item, on the way).
func with(k Known, s schema, v any, pointer string, hostile json.RawMessage) (json.RawMessage, error) {
	var doc any
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	tokens := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	doc, err = set(k, s.resolved(), doc, tokens, hostile)
	if err != nil {
		return nil, err
	}
	return marshalRaw(doc)
}

// omission is a valid value with one member left out.
type omission struct {
	name string
	body json.RawMessage
}

// withoutEach returns v (if an object) once without each of its members.
func withoutEach(v any) []omission {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var out []omission
	for _, name := range sortedKeys(obj) {
		rest := map[string]any{}
		for k, v := range obj {
			if k != name {
				rest[k] = v
			}
		}
		b, _ := json.Marshal(rest) // decoded JSON always marshals
		out = append(out, omission{name, b})
	}
	return out
}

// marker stands for the hostile value while the document is a Go value;
// marshalRaw swaps the raw bytes in, so values that Go would refuse or
// repair (invalid UTF-8, 1e400) are sent exactly.
type marker struct{ raw json.RawMessage }

func set(k Known, s schema, cur any, tokens []string, hostile json.RawMessage) (any, error) {
	if len(tokens) == 0 {
		return marker{hostile}, nil
	}
	tok := strings.ReplaceAll(strings.ReplaceAll(tokens[0], "~1", "/"), "~0", "~")
	if i, err := strconv.Atoi(tok); err == nil && slices.Contains(s.types(), "array") {
		list, _ := cur.([]any)
		for len(list) <= i {
			item, ok := k.valid(s.items())
			if !ok {
				item = nil
			}
			list = append(list, item)
		}
		v, err := set(k, s.items(), list[i], tokens[1:], hostile)
		list[i] = v
		return list, err
	}
	obj, ok := cur.(map[string]any)
	if !ok {
		obj = map[string]any{}
		if v, ok := k.valid(s); ok {
			if m, ok := v.(map[string]any); ok {
				obj = m
			}
		}
	}
	next := obj[tok]
	if next == nil && len(tokens) > 1 {
		next, _ = k.valid(s.property(tok))
	}
	v, err := set(k, s.property(tok), next, tokens[1:], hostile)
	obj[tok] = v
	return obj, err
}

func marshalRaw(v any) (json.RawMessage, error) {
	switch t := v.(type) {
	case marker:
		return t.raw, nil
	case map[string]any:
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range sortedKeys(t) {
			if i > 0 {
				b.WriteByte(',')
			}
			name, _ := json.Marshal(k)
			b.Write(name)
			b.WriteByte(':')
			inner, err := marshalRaw(t[k])
			if err != nil {
				return nil, err
			}
			b.Write(inner)
		}
		b.WriteByte('}')
		return json.RawMessage(b.String()), nil
	case []any:
		var b strings.Builder
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			inner, err := marshalRaw(e)
			if err != nil {
				return nil, err
			}
			b.Write(inner)
		}
		b.WriteByte(']')
		return json.RawMessage(b.String()), nil
	default:
		b, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("hostile: encode %v: %w", t, err)
		}
		return b, nil
	}
}

func escape(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
