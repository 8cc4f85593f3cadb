package testkit

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/store"
)

var fixtureSeq atomic.Int64

// Tenant is a user who administers a workspace, with the IDs tests need.
type Tenant struct {
	Email       string
	Password    string
	UserID      uuid.UUID
	WorkspaceID uuid.UUID
}

// WorkspaceExternalID is the tenant's "ws_…" id.
func (tn Tenant) WorkspaceExternalID() string {
	return id.Format(id.Workspace, tn.WorkspaceID)
}

// NewTenant creates a user and a workspace they administer.
func NewTenant(t testing.TB, pool *pgxpool.Pool) Tenant {
	t.Helper()
	n := fixtureSeq.Add(1)
	tn := Tenant{Email: fmt.Sprintf("user%d-%s@example.com", n, randomHex(3)), Password: "correct horse battery staple"}
	res, err := account.NewService(store.NewDB(pool), "", nil, nil, nil).Bootstrap(context.Background(), account.BootstrapInput{
		Email: tn.Email, Password: tn.Password, Workspace: fmt.Sprintf("Workspace %d", n),
	})
	if err != nil {
		t.Fatalf("testkit: bootstrap tenant: %v", err)
	}
	tn.UserID, _ = id.Parse(id.User, res.UserID)
	tn.WorkspaceID, _ = id.Parse(id.Workspace, res.WorkspaceID)
	return tn
}

// APIKey mints a key for the workspace with the given scopes (all scopes
// when none are given) and returns its token.
func (s *Server) APIKey(t testing.TB, workspaceID uuid.UUID, scopes ...string) string {
	t.Helper()
	if len(scopes) == 0 {
		scopes = scope.Strings(scope.All)
	}
	_, token, err := s.App.Keys.Create(context.Background(), workspaceID, nil, apikey.CreateInput{Name: "test key", Scopes: scopes})
	if err != nil {
		t.Fatalf("testkit: mint API key: %v", err)
	}
	return token
}

// UserAPIKey mints a key in owner's workspace that acts as owner (at
// their role, whatever its scopes: all when none are given), and returns
// it and its token.
func (s *Server) UserAPIKey(t testing.TB, owner Tenant, scopes ...string) (apikey.Key, string) {
	t.Helper()
	if len(scopes) == 0 {
		scopes = scope.Strings(scope.All)
	}
	key, token, err := s.App.Keys.Create(context.Background(), owner.WorkspaceID, &owner.UserID, apikey.CreateInput{Name: "test key of " + owner.Email, Scopes: scopes})
	if err != nil {
		t.Fatalf("testkit: mint %s's API key: %v", owner.Email, err)
	}
	return key, token
}

// Do sends a request with an optional bearer token and JSON body. Responses
// from /api/v1 are validated against the OpenAPI document (see Client).
func (s *Server) Do(t testing.TB, method, path, token, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.Client(t).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}
