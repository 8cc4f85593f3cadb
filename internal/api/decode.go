package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/validate"
)

// MaxBodyBytes is the largest request body accepted (docs/api.md#request-bodies).
const MaxBodyBytes = 64 << 10

// decodeObject reads a JSON object body by the API's rules: JSON
// content type (415), at most 64 KiB (413), well-formed with nothing after
// the value (400), an object (422). Fields are decoded by the caller.
func decodeObject(w http.ResponseWriter, r *http.Request) (*fields, error) {
	return decodeObjectUpTo(w, r, MaxBodyBytes)
}

// decodeObjectUpTo is decodeObject for a route that takes bodies of up to
// limit bytes: a bulk creation, or a QR design carrying a logo
// (MaxDesignBodyBytes).
func decodeObjectUpTo(w http.ResponseWriter, r *http.Request, limit int64) (*fields, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" || (params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8")) {
		return nil, problem.New(problem.UnsupportedMediaType, "send the body as JSON with Content-Type: application/json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, problem.New(problem.PayloadTooLarge, fmt.Sprintf("the body must be at most %d bytes", limit))
	}
	if err != nil {
		return nil, problem.New(problem.InvalidRequest, "the request body could not be read")
	}
	// encoding/json would silently replace invalid UTF-8 with U+FFFD, so a
	// client's broken encoding would be stored as something it never sent.
	if !utf8.Valid(body) {
		return nil, problem.New(problem.InvalidRequest, "the body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, problem.New(problem.InvalidRequest, "the request body is empty; send a JSON object")
		}
		return nil, problem.New(problem.InvalidRequest, "malformed JSON: "+err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, problem.New(problem.InvalidRequest, "unexpected data after the JSON value")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		var errs validate.Errors
		errs.Add("", "the body must be a JSON object")
		return nil, errs
	}
	return &fields{m: m}, nil
}

// fields decodes the members of a JSON object one by one, collecting every
// type error with its pointer, so one response lists all of them.
type fields struct {
	m    map[string]json.RawMessage
	errs validate.Errors
	// prefix is the pointer of the object itself: "" for the body, e.g.
	// "/links/3" for an item of a bulk request.
	prefix string
}

// ptr is the JSON pointer of a member of the object.
func (f *fields) ptr(name string) string { return f.prefix + pointer(name) }

// rejectUnknown adds an error for every member not in allowed.
func (f *fields) rejectUnknown(allowed ...string) {
	for _, name := range slices.Sorted(maps.Keys(f.m)) {
		ok := false
		for _, a := range allowed {
			ok = ok || a == name
		}
		if !ok {
			f.errs.Add(f.ptr(name), "is not a known field")
		}
	}
}

func (f *fields) has(name string) bool { _, ok := f.m[name]; return ok }

func (f *fields) isNull(name string) bool {
	return bytes.Equal(bytes.TrimSpace(f.m[name]), []byte("null"))
}

// str decodes a string member; required reports a missing or null one.
func (f *fields) str(name string, required bool) link.Optional[string] {
	if !f.has(name) {
		if required {
			f.errs.Add(f.ptr(name), "is required")
		}
		return link.Optional[string]{}
	}
	var s string
	if f.isNull(name) || json.Unmarshal(f.m[name], &s) != nil {
		f.errs.Add(f.ptr(name), "must be a string")
		return link.Optional[string]{}
	}
	return link.Some(s)
}

// nullableStr decodes a string-or-null member.
func (f *fields) nullableStr(name string) link.Optional[*string] {
	if !f.has(name) {
		return link.Optional[*string]{}
	}
	if f.isNull(name) {
		return link.Some[*string](nil)
	}
	var s string
	if json.Unmarshal(f.m[name], &s) != nil {
		f.errs.Add(f.ptr(name), "must be a string or null")
		return link.Optional[*string]{}
	}
	return link.Some(&s)
}

// nullableNumber decodes a JSON number-or-null member as written.
func (f *fields) nullableNumber(name string) link.Optional[*json.Number] {
	if !f.has(name) {
		return link.Optional[*json.Number]{}
	}
	if f.isNull(name) {
		return link.Some[*json.Number](nil)
	}
	dec := json.NewDecoder(bytes.NewReader(f.m[name]))
	dec.UseNumber()
	var n json.Number // a JSON string of digits would decode too: refused first
	if bytes.HasPrefix(bytes.TrimSpace(f.m[name]), []byte(`"`)) || dec.Decode(&n) != nil {
		f.errs.Add(f.ptr(name), "must be a number or null")
		return link.Optional[*json.Number]{}
	}
	return link.Some(&n)
}

// nullableTime decodes an RFC 3339 timestamp-or-null member.
func (f *fields) nullableTime(name string) link.Optional[*time.Time] {
	s := f.nullableStr(name)
	if !s.Set || s.Value == nil {
		return link.Optional[*time.Time]{Set: s.Set}
	}
	t, err := time.Parse(time.RFC3339Nano, *s.Value)
	if err != nil {
		f.errs.Add(f.ptr(name), "must be an RFC 3339 timestamp such as 2026-12-31T23:59:59Z, or null")
		return link.Optional[*time.Time]{}
	}
	return link.Some(&t)
}

// nullableJSON decodes a member of any JSON type, numbers as json.Number:
// Set false when absent, a nil Value for null.
func (f *fields) nullableJSON(name string) link.Optional[any] {
	if !f.has(name) {
		return link.Optional[any]{}
	}
	dec := json.NewDecoder(bytes.NewReader(f.m[name]))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil { // the body was checked as JSON already
		f.errs.Add(f.ptr(name), "is not valid JSON")
		return link.Optional[any]{}
	}
	return link.Some(v)
}

// The parse helpers below hand a decoded member to a domain value type's
// parse function (link.ParseTitle, …) and add its refusal under the
// member's pointer, so one response lists every problem — a type error and
// a bad value alike — and the domain receives only parsed values.

// parseOptional parses a member that may be absent.
func parseOptional[S, T any](f *fields, name string, o link.Optional[S], parse func(S) (T, error)) link.Optional[T] {
	if !o.Set {
		return link.Optional[T]{}
	}
	v, err := parse(o.Value)
	if !f.errs.Check(f.ptr(name), err) {
		return link.Optional[T]{}
	}
	return link.Some(v)
}

// parseNullable parses a member that may be absent or null (a set nil).
func parseNullable[S, T any](f *fields, name string, o link.Optional[*S], parse func(S) (T, error)) link.Optional[*T] {
	if !o.Set || o.Value == nil {
		return link.Optional[*T]{Set: o.Set}
	}
	v, err := parse(*o.Value)
	if !f.errs.Check(f.ptr(name), err) {
		return link.Optional[*T]{}
	}
	return link.Some(&v)
}

// pointer builds the JSON pointer of a top-level member (RFC 6901 escaping).
func pointer(name string) string {
	return "/" + strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}
