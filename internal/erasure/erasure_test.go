package erasure_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/erasure"
	"github.com/linkqr/linkqr/internal/export"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// seeded is a workspace with a row in every table a workspace fills.
type seeded struct {
	testkit.Tenant
	key, token string   // API key and OAuth access token
	codes      []string // codes of its links
	linkIDs    []string // lnk_… ids
}

// seed fills a workspace: links (one through the API, so an event and a
// webhook delivery exist), scans, a webhook, an API key, an OAuth client
// and its token.
func seed(t *testing.T, srv *testkit.Server) seeded {
	t.Helper()
	ctx := context.Background()
	s := seeded{Tenant: testkit.NewTenant(t, srv.Pool)}
	s.key = srv.APIKey(t, s.WorkspaceID)
	testkit.JSON(t, srv.Do(t, "POST", "/api/v1/webhooks", s.key, `{"url":"http://127.0.0.1:9/hook","events":["link.created","scan.created"]}`), 201)
	created := testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", s.key, `{"target_url":"https://example.com/api","title":"=formula"}`), 201)
	s.codes = append(s.codes, created["code"].(string))
	s.linkIDs = append(s.linkIDs, created["id"].(string))
	for i := range 3 {
		id := testkit.Link(t, srv.Pool, &testkit.LinkOpts{WorkspaceID: s.WorkspaceID, Deleted: i == 2})
		var code string
		if err := srv.Pool.QueryRow(ctx, `SELECT code FROM links WHERE id = $1`, id).Scan(&code); err != nil {
			t.Fatal(err)
		}
		s.codes = append(s.codes, code)
		s.linkIDs = append(s.linkIDs, store.FormatID(store.PrefixLink, id))
		for v := range 2 {
			testkit.Scan(t, srv.Pool, &testkit.ScanOpts{WorkspaceID: s.WorkspaceID, LinkID: id, Visitor: byte(v)})
		}
	}
	c, secret, err := srv.App.OAuth.CreateClient(ctx, oauth.CreateInput{
		GrantType: oauth.GrantClientCredentials, WorkspaceID: &s.WorkspaceID, Name: "backend", Scopes: []string{"links:read"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.token = accessToken(t, srv, c.ExternalID(), secret)
	return s
}

func accessToken(t *testing.T, srv *testkit.Server, id, secret string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL+"/oauth/token", strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.AccessToken == "" {
		t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	return body.AccessToken
}

func status(t *testing.T, srv *testkit.Server, method, path, token string) int {
	t.Helper()
	resp := srv.Do(t, method, path, token, "")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func redirectStatus(t *testing.T, srv *testkit.Server, code string) int {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(srv.URL + "/" + code)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// rowsOf counts, per table with a workspace_id column, the rows of ws.
func rowsOf(t *testing.T, srv *testkit.Server, ws uuid.UUID) map[string]int {
	t.Helper()
	ctx := context.Background()
	rows, err := srv.Pool.Query(ctx, `SELECT c.table_name FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = 'public' AND c.column_name = 'workspace_id' AND t.table_type = 'BASE TABLE'
		  AND NOT EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhrelid WHERE p.relname = c.table_name)`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 10 {
		t.Fatalf("only %d tables with workspace_id: %v", len(tables), tables)
	}
	out := map[string]int{}
	for _, tb := range tables {
		var n int
		if err := srv.Pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s WHERE workspace_id = $1`, pgx.Identifier{tb}.Sanitize()), ws).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[tb] = n
	}
	var n int
	if err := srv.Pool.QueryRow(ctx, `SELECT count(*) FROM workspaces WHERE id = $1`, ws).Scan(&n); err != nil {
		t.Fatal(err)
	}
	out["workspaces"] = n
	return out
}

// TestExportHoldsEveryRowOfItsWorkspaceAndNoneOfAnother.
func TestExportHoldsEveryRowOfItsWorkspaceAndNoneOfAnother(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	a, b := seed(t, srv), seed(t, srv)
	var buf bytes.Buffer
	sum, err := export.New(srv.App.DB).Workspace(context.Background(), a.WorkspaceID, &buf)
	if err != nil {
		t.Fatal(err)
	}
	files := unzip(t, buf.Bytes())
	want := map[string]int64{"workspace.jsonl": 1, "members.jsonl": 1, "links.jsonl": 4, "links.csv": 4,
		"webhooks.jsonl": 1, "api_keys.jsonl": 1, "oauth_clients.jsonl": 1, "events.jsonl": 1, "scans.jsonl": 6, "scans.csv": 6}
	for name, n := range want {
		lines := strings.Count(files[name], "\n")
		if strings.HasSuffix(name, ".csv") {
			lines-- // header
		}
		if int64(lines) != n || sum.Files[name] != n {
			t.Errorf("%s: %d lines, summary %d, want %d:\n%s", name, lines, sum.Files[name], n, files[name])
		}
		if strings.HasSuffix(name, ".jsonl") {
			for _, l := range strings.Split(strings.TrimSpace(files[name]), "\n") {
				var v map[string]any
				if err := json.Unmarshal([]byte(l), &v); err != nil {
					t.Errorf("%s: %q: %v", name, l, err)
				}
			}
		}
	}
	all := strings.Join(values(files), "\n")
	for _, id := range a.linkIDs {
		if !strings.Contains(files["links.jsonl"], `"id":"`+id+`"`) || !strings.Contains(files["links.csv"], id+",") {
			t.Errorf("link %s missing", id)
		}
	}
	if !strings.Contains(files["members.jsonl"], a.Email) || !strings.Contains(files["workspace.jsonl"], a.WorkspaceExternalID()) {
		t.Errorf("members or workspace missing:\n%s\n%s", files["members.jsonl"], files["workspace.jsonl"])
	}
	if !strings.Contains(files["links.csv"], "'=formula") {
		t.Errorf("a formula-like title is not neutralised in links.csv:\n%s", files["links.csv"])
	}
	for _, other := range append(append([]string{b.Email, b.WorkspaceExternalID()}, b.codes...), b.linkIDs...) {
		if strings.Contains(all, other) {
			t.Errorf("the export of one workspace holds %q of another", other)
		}
	}
	for _, secret := range []string{a.key, "secret", "whsec_", "hash", "visitor"} {
		if strings.Contains(all, secret) {
			t.Errorf("the export holds %q", secret)
		}
	}
}

func unzip(t *testing.T, b []byte) map[string]string {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(r)
		out[f.Name] = string(data)
	}
	return out
}

func values(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// TestDeletedWorkspaceIsUnusableAtOnceAndPurgedInTheBackground: every key
// and token 401, every code 410 (a cached one too), on a second instance
// as well; after the River job no row of it is left, its codes still 410
// and are never handed out again; the other workspace is untouched.
func TestDeletedWorkspaceIsUnusableAtOnceAndPurgedInTheBackground(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	other := testkit.StartServer(t, testkit.WithPool(srv.Pool), testkit.WithEnv("LINKQR_BASE_URL", srv.URL))
	a, b := seed(t, srv), seed(t, srv)
	for _, s := range []*testkit.Server{srv, other} {
		for _, tok := range []string{a.key, a.token} {
			if st := status(t, s, "GET", "/api/v1/links", tok); st != 200 {
				t.Fatalf("before: %d", st)
			}
		}
		if st := redirectStatus(t, s, a.codes[0]); st != 302 { // cached from now on
			t.Fatalf("before: redirect %d", st)
		}
	}
	before := rowsOf(t, srv, b.WorkspaceID)

	srv.App.Erasure.PurgeDelay, other.App.Erasure.PurgeDelay = time.Second, time.Second
	if _, err := srv.App.Erasure.DeleteWorkspace(context.Background(), a.WorkspaceID); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{a.key, a.token} {
		if st := status(t, srv, "GET", "/api/v1/links", tok); st != 401 {
			t.Errorf("a credential of the deleted workspace answers %d", st)
		}
	}
	for _, code := range a.codes {
		if st := redirectStatus(t, srv, code); st != 410 {
			t.Errorf("code %s answers %d", code, st)
		}
	}
	// The other instance learns it by NOTIFY.
	deadline := time.Now().Add(5 * time.Second)
	for redirectStatus(t, other, a.codes[0]) != 410 || status(t, other, "GET", "/api/v1/links", a.key) != 401 ||
		status(t, other, "GET", "/api/v1/links", a.token) != 401 {
		if time.Now().After(deadline) {
			t.Fatal("the second instance still serves the deleted workspace")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := srv.App.Erasure.DeleteWorkspace(context.Background(), a.WorkspaceID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting twice: %v", err)
	}

	// The purge job was queued by the deletion; wait for it.
	deadline = time.Now().Add(30 * time.Second)
	for {
		left := 0
		rows := rowsOf(t, srv, a.WorkspaceID)
		for _, n := range rows {
			left += n
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rows of the deleted workspace left: %v", rows)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if after := rowsOf(t, srv, b.WorkspaceID); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the other workspace changed:\n%v\n%v", before, after)
	}
	for _, code := range a.codes {
		if st := redirectStatus(t, other, code); st != 410 {
			t.Errorf("purged code %s answers %d", code, st)
		}
	}
	testkit.Problem(t, srv.Do(t, "POST", "/api/v1/links", b.key, `{"target_url":"https://example.com/","code":"`+a.codes[1]+`"}`), 409, "conflict")
	if st := status(t, srv, "GET", "/api/v1/links", b.key); st != 200 {
		t.Errorf("the other workspace's key answers %d", st)
	}
	if st := redirectStatus(t, srv, b.codes[0]); st != 302 {
		t.Errorf("the other workspace's code answers %d", st)
	}
}

// TestTypedConfirmationMismatchChangesNothing.
func TestTypedConfirmationMismatchChangesNothing(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	a := seed(t, srv)
	before := rowsOf(t, srv, a.WorkspaceID)
	ws, err := srv.App.Accounts.WorkspaceByID(context.Background(), a.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	for _, typed := range []string{"", strings.ToUpper(ws.Name), ws.Name + " "} {
		if _, err := srv.App.Erasure.DeleteWorkspaceNamed(context.Background(), a.WorkspaceID, typed); !errors.Is(err, erasure.ErrConfirmation) {
			t.Errorf("typed %q: %v", typed, err)
		}
	}
	if after := rowsOf(t, srv, a.WorkspaceID); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a refused deletion changed rows:\n%v\n%v", before, after)
	}
	if st := status(t, srv, "GET", "/api/v1/links", a.key); st != 200 {
		t.Errorf("key answers %d", st)
	}
	if _, err := srv.App.Erasure.DeleteWorkspaceNamed(context.Background(), a.WorkspaceID, ws.Name); err != nil {
		t.Fatal(err)
	}
	if st := status(t, srv, "GET", "/api/v1/links", a.key); st != 401 {
		t.Errorf("key answers %d after deletion", st)
	}
}
