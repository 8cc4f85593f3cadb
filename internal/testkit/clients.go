package testkit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/oauth"
)

// ClientCredentials are what the client libraries' suites (clients/…) run
// with: a full key, a key limited to 60 requests a minute (for 429 and
// Retry-After), an OAuth client-credentials client, and a key with the
// members scopes next to a second member of the workspace (role member) for
// the members API, in workspace ws.
type ClientCredentials struct {
	Token string
	// Env is LINKQR_BASE_URL, LINKQR_TOKEN, LINKQR_TOKEN_LIMITED,
	// LINKQR_OAUTH_CLIENT_ID, LINKQR_OAUTH_CLIENT_SECRET,
	// LINKQR_TOKEN_MEMBERS (members:read, members:write),
	// LINKQR_TOKEN_AUDIT (audit:read only) and
	// LINKQR_MEMBER_ID (the second member's usr_…), for the suite's
	// process.
	Env []string
}

// NewClientCredentials mints them on s, naming them after the client
// (name: "python", "kotlin", …).
func (s *Server) NewClientCredentials(t testing.TB, ws uuid.UUID, name string) ClientCredentials {
	t.Helper()
	ctx := context.Background()
	sixty := 60
	scopes := []string{"links:read", "links:write"}
	_, limited, err := s.App.Keys.Create(ctx, ws, nil, apikey.CreateInput{Name: name + " limited", Scopes: scopes, RateLimitPerMinute: &sixty})
	if err != nil {
		t.Fatal(err)
	}
	cl, secret, err := s.App.OAuth.CreateClient(ctx, oauth.CreateInput{GrantType: oauth.GrantClientCredentials, WorkspaceID: &ws, Name: name, Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	token := s.APIKey(t, ws)
	var admin Tenant
	if err := s.Pool.QueryRow(ctx, `SELECT user_id FROM memberships WHERE workspace_id = $1 AND role = 'admin' ORDER BY created_at LIMIT 1`, ws).Scan(&admin.UserID); err != nil {
		t.Fatalf("testkit: the workspace's admin: %v", err)
	}
	admin.WorkspaceID = ws
	member := s.AddMember(t, admin, account.RoleMember)
	return ClientCredentials{Token: token, Env: []string{
		"LINKQR_BASE_URL=" + s.URL,
		"LINKQR_TOKEN=" + token,
		"LINKQR_TOKEN_LIMITED=" + limited,
		"LINKQR_TOKEN_AUDIT=" + s.APIKey(t, ws, "audit:read"),
		"LINKQR_OAUTH_CLIENT_ID=" + id.Format(id.OAuthClient, cl.ID),
		"LINKQR_OAUTH_CLIENT_SECRET=" + secret,
		"LINKQR_TOKEN_MEMBERS=" + s.APIKey(t, ws, "members:read", "members:write"),
		"LINKQR_MEMBER_ID=" + id.Format(id.User, member.UserID),
	}}
}

// Run executes a command in dir ("" for the test's directory) with env
// added to the environment, logs its combined output and returns it; a
// failure fails the test with that output.
func Run(ctx context.Context, t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	t.Logf("%s %v:\n%s", filepath.Base(name), args, out)
	return string(out)
}
