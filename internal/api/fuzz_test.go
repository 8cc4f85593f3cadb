package api

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/validate"
	"github.com/linkqr/linkqr/internal/webhook"
)

// The parsers at the API's edge, fuzzed: the body decoder, the link and
// webhook bodies built on it, and the list's query string. Each either
// refuses with an answer of the contract's kinds (a 4xx problem or field
// errors) or returns values that the domain can store.

var bodySeeds = []string{
	`{"target_url":"https://example.com/menu","title":"Spring menu","code":"spring-menu","expires_at":"2099-01-01T00:00:00Z"}`,
	`{"title":"\u0000"}`, `{"title":"a\u0000b"}`, `{"title":"\ud800"}`, "{\"title\":\"\xff\"}", `{"title":null}`, `{"title":1}`,
	`{"url":"https://hooks.example.com/h","events":["link.created"],"description":"\u0000"}`, `{"description":"Orders"}`,
	`{"status":"paused"}`, `{"code":null}`, `{"expires_at":"2026-02-30T25:61:61Z"}`, `{"a":1}{}`, `[]`, `null`, ``, `{`,
	`{"a":1,"a":2}`, "\ufeff{}", `{"title":"` + strings.Repeat("é", 201) + `"}`,
}

// refused reports whether err is one of the decoder's answers: a problem
// of status 400, 413 or 415, or field errors (422).
func refused(err error) bool {
	var p *problem.Problem
	var verrs validate.Errors
	if errors.As(err, &p) {
		s := p.Type.Status
		return s == http.StatusBadRequest || s == http.StatusRequestEntityTooLarge || s == http.StatusUnsupportedMediaType || s == http.StatusUnprocessableEntity
	}
	return errors.As(err, &verrs) && len(verrs) > 0
}

func decode(body, contentType string) (*fields, error) {
	r := httptest.NewRequest(http.MethodPost, "/api/v1/links", strings.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	return decodeObject(httptest.NewRecorder(), r)
}

// FuzzDecodeObject: what the decoder accepts is a JSON object of valid
// UTF-8, at most 64 KiB, sent as application/json.
func FuzzDecodeObject(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add(s, "application/json")
	}
	f.Add(`{}`, "application/json; charset=UTF-8")
	f.Add(`{}`, "application/json; charset=latin1")
	f.Add(`{}`, "text/plain")
	f.Add(`{}`, "Application/JSON")
	f.Add(`{}`, "")
	f.Add(`{"a":"`+strings.Repeat("A", MaxBodyBytes)+`"}`, "application/json")
	f.Fuzz(func(t *testing.T, body, contentType string) {
		got, err := decode(body, contentType)
		if err != nil {
			if !refused(err) {
				t.Fatalf("%q: %v is not a 4xx answer", body, err)
			}
			return
		}
		var m map[string]json.RawMessage
		mt, _, _ := mime.ParseMediaType(contentType)
		if !utf8.ValidString(body) || len(body) > MaxBodyBytes || json.Unmarshal([]byte(body), &m) != nil || m == nil || mt != "application/json" {
			t.Fatalf("accepted %q sent as %q", body, contentType)
		}
		if len(got.m) != len(m) {
			t.Fatalf("%q: %d members decoded, %d in the body", body, len(got.m), len(m))
		}
	})
}

// FuzzDecodeBodies: a link or webhook body that decodes without errors
// holds only parsed values: every text one that PostgreSQL can store.
func FuzzDecodeBodies(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add(s)
	}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	storable := func(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }
	f.Fuzz(func(t *testing.T, body string) {
		for name, run := range map[string]func(*fields) error{
			"create link": func(fl *fields) error {
				in, err := decodeCreate(fl, now)
				if err == nil && (!storable(in.TargetURL.String()) || in.Title != nil && !storable(in.Title.String())) {
					t.Fatalf("create %q: unstorable %+v", body, in)
				}
				return err
			},
			"update link": func(fl *fields) error {
				in, err := decodeUpdate(fl, now)
				if err == nil && in.Title.Set && in.Title.Value != nil && !storable(in.Title.Value.String()) {
					t.Fatalf("update %q: unstorable title %q", body, in.Title.Value)
				}
				return err
			},
			"webhook description": func(fl *fields) error {
				d := parseNullable(fl, "description", fl.nullableStr("description"), webhook.DescriptionRule.Parse)
				if err := fl.errs.Err(); err != nil {
					return err
				}
				if d.Set && d.Value != nil && !storable(d.Value.String()) {
					t.Fatalf("%q: unstorable description %q", body, d.Value)
				}
				return nil
			},
		} {
			fl, err := decode(body, "application/json")
			if err != nil {
				return
			}
			if err := run(fl); err != nil && !refused(err) {
				t.Fatalf("%s %q: %v is not a 4xx answer", name, body, err)
			}
		}
	})
}

// FuzzParsePage: a page that parses has a limit of 1 to 100; anything else
// is a 400 (query string, cursor) or field errors under /query/.
func FuzzParsePage(f *testing.F) {
	for _, s := range []string{"", "limit=5", "limit=0", "limit=101", "limit=05", "limit=1&limit=2", "cursor=x", "q=menu&status=all",
		"limt=5", "%zz", "limit=%00", "x\x00=1", "\xff=\xfe", "cursor=" + strings.Repeat("A", 1000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/api/v1/links", RawQuery: raw}}
		p, err := parsePage(r, "q", "status")
		if err != nil {
			var verrs validate.Errors
			if errors.As(err, &verrs) {
				for _, e := range verrs {
					if !strings.HasPrefix(e.Pointer, "/query/") {
						t.Fatalf("%q: pointer %q", raw, e.Pointer)
					}
				}
			} else if !refused(err) {
				t.Fatalf("%q: %v", raw, err)
			}
			return
		}
		if p.limit < 1 || p.limit > maxLimit {
			t.Fatalf("%q: limit %d", raw, p.limit)
		}
		if _, err := link.ParseSearchTerm(r.URL.Query().Get("q")); err != nil && !validate.IsRejection(err) {
			t.Fatalf("%q: search term: %v", raw, err)
		}
	})
}
