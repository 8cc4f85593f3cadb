package testkit

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/oauth"
)

// Seeded is a workspace with rows in every table a workspace fills, for
// tests that must see all of them (export, deletion).
type Seeded struct {
	Tenant
	Key, Token string   // an API key and an OAuth access token of it
	Codes      []string // codes of its links (the last one deleted)
	LinkIDs    []string // lnk_… ids
}

// SeedWorkspace fills a new workspace on s (started with
// LINKQR_WEBHOOK_ALLOW_PRIVATE=true): a webhook, one link through the API
// (so an event and a delivery exist), three more links with two scans each
// (rollups included; one link deleted), a custom domain (pending), an API
// key, an OAuth client and its access token.
func SeedWorkspace(t testing.TB, s *Server) Seeded {
	t.Helper()
	ctx := context.Background()
	sd := Seeded{Tenant: NewTenant(t, s.Pool)}
	sd.Key = s.APIKey(t, sd.WorkspaceID)
	JSON(t, s.Do(t, "POST", "/api/v1/webhooks", sd.Key, `{"url":"http://127.0.0.1:9/hook","events":["link.created","scan.created"]}`), 201)
	created := JSON(t, s.Do(t, "POST", "/api/v1/links", sd.Key, `{"target_url":"https://example.com/api","title":"=formula"}`), 201)
	sd.Codes = append(sd.Codes, created["code"].(string))
	sd.LinkIDs = append(sd.LinkIDs, created["id"].(string))
	for i := range 3 {
		code := "sd" + randomHex(6)
		linkID := Link(t, s.Pool, &LinkOpts{WorkspaceID: sd.WorkspaceID, Code: code, Deleted: i == 2})
		sd.Codes = append(sd.Codes, code)
		sd.LinkIDs = append(sd.LinkIDs, id.Format(id.Link, linkID))
		for v := range 2 {
			Scan(t, s.Pool, &ScanOpts{WorkspaceID: sd.WorkspaceID, LinkID: linkID, Visitor: byte(v)})
		}
	}
	if _, err := s.Pool.Exec(ctx, `INSERT INTO domains (id, workspace_id, hostname, verification_token)
		VALUES (gen_random_uuid(), $1, $2, 'seed')`, sd.WorkspaceID, "go-"+randomHex(6)+".example.com"); err != nil {
		t.Fatal(err)
	}
	c, secret, err := s.App.OAuth.CreateClient(ctx, oauth.CreateInput{
		GrantType: oauth.GrantClientCredentials, WorkspaceID: &sd.WorkspaceID, Name: "backend", Scopes: []string{"links:read"},
	})
	if err != nil {
		t.Fatal(err)
	}
	sd.Token = clientToken(t, s, c.ExternalID(), secret)
	return sd
}

// clientToken gets a client-credentials access token.
func clientToken(t testing.TB, s *Server, id, secret string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", s.URL+"/oauth/token", strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
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
		t.Fatalf("testkit: client token: %d %v", resp.StatusCode, err)
	}
	return body.AccessToken
}
