package problem

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/linkqr/linkqr/internal/requestid"
	"github.com/linkqr/linkqr/internal/validate"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	pw := Writer{BaseURL: "https://linkqr.example/"}
	var errs validate.Errors
	errs.Add("/target_url", "must be an absolute http or https URL")
	errs.Add("/title", "must be at most 200 characters")
	h := requestid.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pw.Write(w, r, Validation(errs))
	}))
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/api/v1/links", nil)
	req.Header.Set(requestid.Header, "req-42")
	h.ServeHTTP(rec, req)

	if rec.Code != 422 || rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("status %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"type":       "https://linkqr.example/problems/validation-failed",
		"title":      "Validation failed",
		"status":     float64(422),
		"detail":     "target_url must be an absolute http or https URL (and 1 more error)",
		"instance":   "/api/v1/links",
		"request_id": "req-42",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	list, _ := got["errors"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["pointer"] != "/target_url" {
		t.Errorf("errors = %v", got["errors"])
	}
	if _, ok := got["required_scope"]; ok {
		t.Error("required_scope must be absent unless set")
	}
}

func TestCatalog(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, ty := range Catalog {
		if seen[ty.Slug] || ty.Title == "" || ty.Description == "" || ty.Status < 400 {
			t.Errorf("bad or duplicate type %+v", ty)
		}
		seen[ty.Slug] = true
		if got, ok := Lookup(ty.Slug); !ok || got != ty {
			t.Errorf("Lookup(%q)", ty.Slug)
		}
	}
	if len(Catalog) != 18 { // the 15 of docs/api.md's table, domain-not-verified, qr-unreadable and forbidden
		t.Errorf("catalogue has %d types, docs/api.md lists 18", len(Catalog))
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup of unknown slug")
	}
}

// TestInstanceIsAURIReference: instance is the path as sent on the wire
// (escaped), which the schema's uri-reference format accepts, never the
// decoded one (a space, a NUL, a non-ASCII letter).
func TestInstanceIsAURIReference(t *testing.T) {
	t.Parallel()
	pw := Writer{BaseURL: "https://linkqr.example"}
	for raw, want := range map[string]string{
		"/api/v1/links/%C3%A4%20x": "/api/v1/links/%C3%A4%20x",
		"/api/v1/links/a%00b":      "/api/v1/links/a%00b",
		"/api/v1/links/lnk_1":      "/api/v1/links/lnk_1",
	} {
		req := httptest.NewRequest(http.MethodGet, raw, nil)
		got := pw.Object(req, New(NotFound, "")).Instance
		if got != want {
			t.Errorf("%s: instance %q, want %q", raw, got, want)
		}
		if u, err := url.Parse(got); err != nil || u.Path != req.URL.Path {
			t.Errorf("%s: instance %q is not a reference to the path (%v)", raw, got, err)
		}
	}
}
