package api_test

import (
	"strings"
	"testing"
	"time"

	cursorpkg "github.com/linkqr/linkqr/internal/cursor"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestListScans(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	l := f.create(t, `{"target_url":"https://example.com"}`)
	linkID, _ := id.Parse(id.Link, l["id"].(string))
	other := f.create(t, `{"target_url":"https://example.com/other"}`)
	otherID, _ := id.Parse(id.Link, other["id"].(string))
	start := time.Now().Add(-time.Hour)
	var want []string // newest first
	for i := range 5 {
		// Scans 2 and 3 occurred at the same instant, and the first page
		// (limit 2) ends at scan 3: its id orders the tie, so the next page
		// starts at 2, neither skipping nor repeating it.
		at := start.Add(time.Duration(min(i, 2)+max(i-3, 0)) * time.Minute)
		scan := testkit.Scan(t, f.srv.Pool, &testkit.ScanOpts{WorkspaceID: f.tenant.WorkspaceID, LinkID: linkID, At: at, Bot: i == 2})
		want = append([]string{id.Format(id.Scan, scan)}, want...)
	}
	testkit.Scan(t, f.srv.Pool, &testkit.ScanOpts{WorkspaceID: f.tenant.WorkspaceID, LinkID: otherID})

	base := "/api/v1/links/" + l["id"].(string) + "/scans"
	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		path := base + "?limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		list := testkit.JSON(t, f.srv.Do(t, "GET", path, f.token, ""), 200)
		for _, d := range list["data"].([]any) {
			s := d.(map[string]any)
			if s["object"] != "scan" || s["link_id"] != l["id"] || s["device"] != "mobile" {
				t.Errorf("scan %v", s)
			}
			seen = append(seen, s["id"].(string))
		}
		if list["has_more"] == false {
			if list["next_cursor"] != nil {
				t.Errorf("next_cursor %v on the last page", list["next_cursor"])
			}
			break
		}
		cursor = list["next_cursor"].(string)
		if page > 5 {
			t.Fatal("pagination does not end")
		}
	}
	if strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Errorf("pages %v, want newest first %v", seen, want)
	}

	testkit.Problem(t, f.srv.Do(t, "GET", base+"?cursor=nope", f.token, ""), 400, "invalid-request")
	// A scan's cursor holds its time and id; an id alone (the cursor of
	// other lists) is not one.
	testkit.Problem(t, f.srv.Do(t, "GET", base+"?cursor="+cursorpkg.Encode(linkID), f.token, ""), 400, "invalid-request")
	p := testkit.Problem(t, f.srv.Do(t, "GET", base+"?limit=1&limit=2", f.token, ""), 422, "validation-failed")
	if e := p["errors"].([]any)[0].(map[string]any); e["pointer"] != "/query/limit" || e["detail"] != "must be given at most once" {
		t.Errorf("repeated limit: %v", e)
	}
	testkit.Problem(t, f.srv.Do(t, "GET", base, f.otherTk, ""), 404, "not-found")
	testkit.Problem(t, f.srv.Do(t, "GET", base, f.srv.APIKey(t, f.tenant.WorkspaceID, "links:read"), ""), 403, "insufficient-scope")
}
