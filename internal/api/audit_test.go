package api_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/webhook"
)

// auditPage is one page of GET /audit-events: its entries' ids and
// actions, and the next cursor.
func auditPage(t *testing.T, f *linksFixture, token, query string) (ids, actions []string, next string) {
	t.Helper()
	page := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/audit-events"+query, token, ""), 200)
	for _, e := range page["data"].([]any) {
		m := e.(map[string]any)
		ids, actions = append(ids, m["id"].(string)), append(actions, m["action"].(string))
	}
	if c, ok := page["next_cursor"].(string); ok {
		next = c
	}
	return ids, actions, next
}

// TestAuditEventsList: GET /audit-events lists the workspace's entries
// newest first in pages, filters by action (exact and prefix), actor,
// target and time, refuses bad filters with 422 naming the parameter,
// needs audit:read, and never shows another workspace's entries.
func TestAuditEventsList(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	ctx := context.Background()
	app := f.srv.App
	ws := f.tenant.WorkspaceID
	uid := f.tenant.UserID
	alice := audit.WithActor(ctx, audit.Actor{Type: audit.ActorUser, ID: id.Format(id.User, uid), UserID: &uid, Email: f.tenant.Email})
	bot := audit.WithActor(ctx, audit.Actor{Type: audit.ActorAPIKey, ID: "key_06gzzsq08t3bj5s5kz2h1x9q4c"})
	before := time.Now().UTC()
	token := f.srv.APIKey(t, ws, "audit:read") // the fixture's key and this one: api_key.created twice

	var hooks []webhook.Resource
	for i := range 3 {
		h, err := app.Webhooks.Create(alice, ws, webhook.CreateInput{URL: fmt.Sprintf("%s/%d", publicHook, i), Events: []string{"link.created"}})
		if err != nil {
			t.Fatal(err)
		}
		hooks = append(hooks, h)
	}
	if err := app.Webhooks.Delete(bot, ws, hooks[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Accounts.RenameWorkspace(alice, ws, "Renamed for the audit"); err != nil {
		t.Fatal(err)
	}
	// Another workspace's entry, which must never show.
	if _, err := app.Accounts.RenameWorkspace(ctx, f.other.WorkspaceID, "Other workspace"); err != nil {
		t.Fatal(err)
	}
	// Every entry, newest first, in pages of two.
	var all, actions []string
	query := "?limit=2"
	for pages := 1; ; pages++ {
		ids, acts, next := auditPage(t, f, token, query)
		all, actions = append(all, ids...), append(actions, acts...)
		if next == "" {
			if pages != 4 {
				t.Fatalf("%d pages of 2 for %d entries", pages, len(all))
			}
			break
		}
		query = "?limit=2&cursor=" + url.QueryEscape(next)
	}
	want := []string{"workspace.renamed", "webhook.deleted", "webhook.created", "webhook.created", "webhook.created", "api_key.created", "api_key.created"}
	if !slices.Equal(actions, want) {
		t.Fatalf("actions %v, want %v", actions, want)
	}
	if !slices.IsSortedFunc(all, func(a, b string) int { return -compareIDs(a, b) }) {
		t.Errorf("not newest first: %v", all)
	}

	// The full object.
	page := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/audit-events?action=webhook.deleted", token, ""), 200)
	e := page["data"].([]any)[0].(map[string]any)
	actor, target := e["actor"].(map[string]any), e["target"].(map[string]any)
	if e["object"] != "audit_event" || actor["type"] != "api_key" || actor["id"] != "key_06gzzsq08t3bj5s5kz2h1x9q4c" ||
		target["type"] != "webhook" || target["id"] != hooks[0].Wire().ID || len(e["hash"].(string)) != 64 {
		t.Errorf("entry %v", e)
	}

	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"?action=webhook.created", want[2:5]},
		{"?action=webhook.", want[1:5]},
		{"?action=workspace.", want[:1]},
		{"?action=domain.created", nil},
		{"?actor_id=key_06gzzsq08t3bj5s5kz2h1x9q4c", want[1:2]},
		{"?actor_id=" + id.Format(id.User, uid), []string{want[0], want[2], want[3], want[4]}},
		{"?target_id=" + hooks[0].Wire().ID, []string{want[1], want[4]}},
		{"?target_id=" + hooks[0].Wire().ID + "&action=webhook.created", want[4:5]},
		{"?since=" + url.QueryEscape(before.Add(-time.Minute).Format(time.RFC3339)), want},
		{"?since=" + url.QueryEscape(time.Now().Add(time.Minute).Format(time.RFC3339)), nil},
		{"?until=" + url.QueryEscape(before.Add(-time.Minute).Format(time.RFC3339)), nil},
	} {
		_, acts, _ := auditPage(t, f, token, tc.query)
		if !slices.Equal(acts, tc.want) {
			t.Errorf("%s: %v, want %v", tc.query, acts, tc.want)
		}
	}

	for _, tc := range []struct{ query, pointer string }{
		{"?action=webhook.exploded", "/query/action"},
		{"?action=nonsense.", "/query/action"},
		{"?actor_id=somebody", "/query/actor_id"},
		{"?target_id=whk_%C3%A9", "/query/target_id"},
		{"?since=yesterday", "/query/since"},
		{"?until=2026-13-01T00:00:00Z", "/query/until"},
		{"?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z", "/query/until"},
		{"?limit=0", "/query/limit"},
		{"?acton=webhook.", "/query/acton"},
	} {
		p := testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/audit-events"+tc.query, token, ""), 422, "validation-failed")
		if !strings.Contains(fmt.Sprint(p["errors"]), tc.pointer) {
			t.Errorf("%s: errors %v, want %s", tc.query, p["errors"], tc.pointer)
		}
	}

	// audit:read is required; another workspace sees only its own.
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/audit-events", f.srv.APIKey(t, ws, "links:read"), ""), 403, "insufficient-scope")
	otherIDs, otherActs, _ := auditPage(t, f, f.srv.APIKey(t, f.other.WorkspaceID, "audit:read"), "?limit=100")
	if !slices.Contains(otherActs, "workspace.renamed") || slices.Contains(otherActs, "webhook.created") {
		t.Errorf("the other workspace sees %v %v", otherIDs, otherActs)
	}
	for _, id := range otherIDs {
		if slices.Contains(all, id) {
			t.Errorf("%s is in both workspaces' logs", id)
		}
	}
	if ids, _, _ := auditPage(t, f, f.srv.APIKey(t, f.other.WorkspaceID, "audit:read"), "?target_id="+hooks[1].Wire().ID); len(ids) != 0 {
		t.Errorf("the other workspace finds %v filtering by this one's target", ids)
	}
}
