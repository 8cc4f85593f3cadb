package erasure_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/erasure"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func status(t *testing.T, srv *testkit.Server, method, path, token string) int {
	t.Helper()
	resp := srv.Do(t, method, path, token, "")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func redirectStatus(t *testing.T, srv *testkit.Server, code string) int {
	t.Helper()
	return redirectStatusOn(t, srv, "", code)
}

// redirectStatusOn is redirectStatus with Host: host ("": the server's own).
func redirectStatusOn(t *testing.T, srv *testkit.Server, host, code string) int {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", srv.URL+"/"+code, nil)
	if host != "" {
		req.Host = host
	}
	resp, err := c.Do(req)
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

// TestDeletedWorkspaceIsUnusableAtOnceAndPurgedInTheBackground: every key
// and token 401, every code 410 (a cached one too), on a second instance
// as well; after the River job no row of it is left, its codes still 410
// and are never handed out again; the other workspace is untouched.
func TestDeletedWorkspaceIsUnusableAtOnceAndPurgedInTheBackground(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	other := testkit.StartServer(t, testkit.WithPool(srv.Pool), testkit.WithEnv("LINKQR_BASE_URL", srv.URL))
	a, b := testkit.SeedWorkspace(t, srv), testkit.SeedWorkspace(t, srv)
	for _, s := range []*testkit.Server{srv, other} {
		for _, tok := range []string{a.Key, a.Token} {
			if st := status(t, s, "GET", "/api/v1/links", tok); st != 200 {
				t.Fatalf("before: %d", st)
			}
		}
		if st := redirectStatus(t, s, a.Codes[0]); st != 302 { // cached from now on
			t.Fatalf("before: redirect %d", st)
		}
	}
	before := rowsOf(t, srv, b.WorkspaceID)

	srv.App.Erasure.PurgeDelay, other.App.Erasure.PurgeDelay = time.Second, time.Second
	if _, err := srv.App.Erasure.DeleteWorkspace(context.Background(), a.WorkspaceID); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{a.Key, a.Token} {
		if st := status(t, srv, "GET", "/api/v1/links", tok); st != 401 {
			t.Errorf("a credential of the deleted workspace answers %d", st)
		}
	}
	for _, code := range a.Codes {
		if st := redirectStatus(t, srv, code); st != 410 {
			t.Errorf("code %s answers %d", code, st)
		}
	}
	// The other instance learns it by NOTIFY.
	deadline := time.Now().Add(5 * time.Second)
	for redirectStatus(t, other, a.Codes[0]) != 410 || status(t, other, "GET", "/api/v1/links", a.Key) != 401 ||
		status(t, other, "GET", "/api/v1/links", a.Token) != 401 {
		if time.Now().After(deadline) {
			t.Fatal("the second instance still serves the deleted workspace")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var enabled int
	if err := srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_subscriptions WHERE workspace_id = $1 AND status = 'enabled'`, a.WorkspaceID).Scan(&enabled); err != nil || enabled != 0 {
		t.Errorf("webhooks of the deleted workspace still enabled: %d %v", enabled, err)
	}
	if _, err := srv.App.Erasure.DeleteWorkspace(context.Background(), a.WorkspaceID); !errors.Is(err, id.ErrNotFound) {
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
	// The delivery worker may add an attempt of the other workspace's
	// event meanwhile (a retry): its deliveries may grow, never shrink.
	after := rowsOf(t, srv, b.WorkspaceID)
	if after["webhook_deliveries"] >= before["webhook_deliveries"] {
		after["webhook_deliveries"] = before["webhook_deliveries"]
	}
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the other workspace changed:\n%v\n%v", before, after)
	}
	for _, code := range a.Codes {
		if st := redirectStatus(t, other, code); st != 410 {
			t.Errorf("purged code %s answers %d", code, st)
		}
	}
	testkit.Problem(t, srv.Do(t, "POST", "/api/v1/links", b.Key, `{"target_url":"https://example.com/","code":"`+a.Codes[1]+`"}`), 409, "conflict")
	if st := status(t, srv, "GET", "/api/v1/links", b.Key); st != 200 {
		t.Errorf("the other workspace's key answers %d", st)
	}
	if st := redirectStatus(t, srv, b.Codes[0]); st != 302 {
		t.Errorf("the other workspace's code answers %d", st)
	}
}

// TestTypedConfirmationMismatchChangesNothing.
func TestTypedConfirmationMismatchChangesNothing(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	a := testkit.SeedWorkspace(t, srv)
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
	if st := status(t, srv, "GET", "/api/v1/links", a.Key); st != 200 {
		t.Errorf("key answers %d", st)
	}
	if _, err := srv.App.Erasure.DeleteWorkspaceNamed(context.Background(), a.WorkspaceID, ws.Name); err != nil {
		t.Fatal(err)
	}
	if st := status(t, srv, "GET", "/api/v1/links", a.Key); st != 401 {
		t.Errorf("key answers %d after deletion", st)
	}
}

// A purged workspace's codes on its custom domain stay taken on that
// hostname: the next workspace to verify it cannot hand them out again,
// and they answer 410 there.
func TestPurgedCodesOnACustomDomainAreRetiredWithTheirHostname(t *testing.T) {
	t.Parallel()
	dnsSrv := testkit.StartDNS(t)
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_DNS_RESOLVER", dnsSrv.Addr))
	srv.App.Erasure.PurgeDelay = time.Second
	a, b := testkit.NewTenant(t, srv.Pool), testkit.NewTenant(t, srv.Pool)
	aKey, bKey := srv.APIKey(t, a.WorkspaceID), srv.APIKey(t, b.WorkspaceID)
	srv.VerifiedDomain(t, dnsSrv, aKey, "go.acme.com")
	testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", aKey, `{"target_url":"https://acme.com/","code":"menu","domain":"go.acme.com"}`), 201)
	if _, err := srv.App.Erasure.DeleteWorkspace(context.Background(), a.WorkspaceID); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 60*time.Second, func() bool { return rowsOf(t, srv, a.WorkspaceID)["workspaces"] == 0 }, "the deleted workspace is purged")
	srv.VerifiedDomain(t, dnsSrv, bKey, "go.acme.com")
	testkit.Problem(t, srv.Do(t, "POST", "/api/v1/links", bKey, `{"target_url":"https://b.example/","code":"menu","domain":"go.acme.com"}`), 409, "conflict")
	testkit.JSON(t, srv.Do(t, "POST", "/api/v1/links", bKey, `{"target_url":"https://b.example/","code":"menu"}`), 201) // another hostname's code
	if st := redirectStatusOn(t, srv, "go.acme.com", "menu"); st != 410 {
		t.Errorf("the purged code on go.acme.com answers %d, want 410", st)
	}
}
