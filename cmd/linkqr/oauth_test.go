package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2/clientcredentials"

	"github.com/linkqr/linkqr/internal/testkit/wait"
)

func TestAdminOAuthClientCreate(t *testing.T) {
	requirePostgres(t)
	dataDir := t.TempDir()
	s := startServe(t, dataDir)
	env := baseEnv(dataDir, freeAddr(t))
	code, ids, errOut := bootstrap(t, env, "correct horse battery staple")
	if code != 0 {
		t.Fatalf("bootstrap: %s", errOut)
	}

	// A workspace's client-credentials client: its secret gets a token that
	// acts in that workspace with the scope asked for.
	code, out, errOut := runCmd(t, env, "admin", "oauth-client", "create", "--grant", "client_credentials",
		"--workspace", ids["workspace_id"], "--name", "backend", "--scopes", "links:read,links:write")
	var cc map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &cc) != nil || !strings.HasPrefix(cc["client_id"].(string), "cli_") || !strings.HasPrefix(cc["client_secret"].(string), "lqcs_") {
		t.Fatalf("create client_credentials: exit %d, %q, %s", code, out, errOut)
	}
	conf := clientcredentials.Config{ClientID: cc["client_id"].(string), ClientSecret: cc["client_secret"].(string), TokenURL: s.url + "/oauth/token", Scopes: []string{"links:read"}}
	resp, err := conf.Client(context.Background()).Get(s.url + "/api/v1/workspace")
	if err != nil {
		t.Fatal(err)
	}
	var ws map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&ws)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || ws["id"] != ids["workspace_id"] {
		t.Fatalf("workspace with the client's token: %d %v", resp.StatusCode, ws)
	}

	// A public partner: no secret.
	code, out, errOut = runCmd(t, env, "admin", "oauth-client", "create", "--grant", "authorization_code",
		"--name", "Partner", "--redirect-uri", "https://partner.example/cb", "--redirect-uri", "http://127.0.0.1:9999/cb", "--public", "--scopes", "links:read")
	var pc map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &pc) != nil || !strings.HasPrefix(pc["client_id"].(string), "cli_") || pc["client_secret"] != nil {
		t.Fatalf("create public partner: exit %d, %q, %s", code, out, errOut)
	}
	code, out, errOut = runCmd(t, env, "admin", "oauth-client", "create", "--grant", "authorization_code",
		"--name", "Partner", "--redirect-uri", "https://partner.example/cb", "--scopes", "links:read")
	if code != 0 || !strings.Contains(out, `"client_secret":"lqcs_`) {
		t.Fatalf("create confidential partner: exit %d, %q, %s", code, out, errOut)
	}

	// The operator revokes the client: its token stops working (the
	// server learns through NOTIFY), and so does its secret.
	before, err := conf.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCmd(t, env, "admin", "oauth-client", "revoke", "--client", cc["client_id"].(string))
	if code != 0 || !strings.Contains(out, `"status":"revoked"`) {
		t.Fatalf("revoke: exit %d, %q, %s", code, out, errOut)
	}
	tok, err := conf.Token(context.Background())
	if err == nil {
		t.Fatalf("a revoked client got a token: %v", tok)
	}
	wait.Until(t, 5*time.Second, func() (bool, string) {
		req, _ := http.NewRequest("GET", s.url+"/api/v1/workspace", nil)
		req.Header.Set("Authorization", "Bearer "+before.AccessToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusUnauthorized, fmt.Sprintf("the revoked client's token still gets %d", resp.StatusCode)
	})
	code, _, errOut = runCmd(t, env, "admin", "oauth-client", "revoke", "--client", cc["client_id"].(string))
	if code != 1 || !strings.Contains(errOut, "no active client") {
		t.Errorf("second revoke: exit %d, %s", code, errOut)
	}

	// Bad input: a clear line, exit 1 (2 for usage), nothing created.
	for _, c := range []struct {
		args []string
		exit int
		want string
	}{
		{[]string{"--grant", "implicit", "--name", "n", "--scopes", "links:read"}, 1, "--grant must be client_credentials or authorization_code"},
		{[]string{"--grant", "client_credentials", "--name", "n", "--scopes", "links:read"}, 1, `--workspace "" is not a workspace id`},
		{[]string{"--grant", "authorization_code", "--name", "n", "--scopes", "links:read"}, 1, "--redirect-uri must list 1 to 10 redirect URIs"},
		{[]string{"--grant", "authorization_code", "--name", "n", "--scopes", "links:read", "--redirect-uri", "http://partner.example/cb"}, 1, "--redirect-uri must be https"},
		{[]string{"--grant", "authorization_code", "--name", "n", "--scopes", "links:read", "--redirect-uri", "https://p.example/cb", "--workspace", ids["workspace_id"]}, 1, "--workspace an authorization_code client is not bound to a workspace"},
		{[]string{"--grant", "client_credentials", "--workspace", ids["workspace_id"], "--name", "n", "--scopes", "links:admin"}, 1, `--scopes "links:admin" is not a scope`},
		{[]string{"--grant", "client_credentials", "--workspace", ids["workspace_id"], "--name", "n", "--scopes", "links:read", "--public"}, 1, "--grant redirect URIs and --public are for authorization_code clients"},
		{[]string{"--grant", "client_credentials", "--name", "n"}, 2, "missing required flag(s): --scopes"},
	} {
		code, out, errOut := runCmd(t, env, append([]string{"admin", "oauth-client", "create"}, c.args...)...)
		if code != c.exit || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, out, errOut, c.exit, c.want)
		}
	}
}

// TestAdminOAuthClientList: a client that registered itself at
// /oauth/register is listed with its origin, revoked by the operator, and
// then listed only with --revoked.
func TestAdminOAuthClientList(t *testing.T) {
	requirePostgres(t)
	dataDir := t.TempDir()
	s := startServe(t, dataDir)
	env := baseEnv(dataDir, freeAddr(t))
	resp, err := http.Post(s.url+"/oauth/register", "application/json",
		strings.NewReader(`{"client_name":"Desk Assistant","redirect_uris":["http://127.0.0.1:7777/cb"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&reg)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("register: %d %v", resp.StatusCode, reg)
	}
	code, out, errOut := runCmd(t, env, "admin", "oauth-client", "create", "--grant", "authorization_code",
		"--name", "Partner", "--redirect-uri", "https://partner.example/cb", "--public", "--scopes", "links:read")
	if code != 0 {
		t.Fatalf("create partner: exit %d, %s", code, errOut)
	}
	list := func(args ...string) []map[string]any {
		t.Helper()
		code, out, errOut := runCmd(t, env, append([]string{"admin", "oauth-client", "list"}, args...)...)
		if code != 0 {
			t.Fatalf("list %v: exit %d, %s", args, code, errOut)
		}
		var rows []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if line == "" {
				continue
			}
			var row map[string]any
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("list line %q: %v", line, err)
			}
			rows = append(rows, row)
		}
		return rows
	}
	all := list()
	if len(all) != 2 || all[0]["origin"] != "operator" || all[1]["origin"] != "dynamic_registration" || all[1]["name"] != "Desk Assistant" ||
		all[1]["public"] != true || all[1]["client_id"] != reg["client_id"] || all[1]["active_grants"] != float64(0) {
		t.Fatalf("list: %v (create printed %s)", all, out)
	}
	if dyn := list("--dynamic"); len(dyn) != 1 || dyn[0]["client_id"] != reg["client_id"] {
		t.Errorf("list --dynamic: %v", dyn)
	}
	code, _, errOut = runCmd(t, env, "admin", "oauth-client", "revoke", "--client", reg["client_id"].(string))
	if code != 0 {
		t.Fatalf("revoke: exit %d, %s", code, errOut)
	}
	if dyn := list("--dynamic"); len(dyn) != 0 {
		t.Errorf("a revoked client is still listed: %v", dyn)
	}
	if dyn := list("--dynamic", "--revoked"); len(dyn) != 1 || dyn[0]["revoked"] != true {
		t.Errorf("list --dynamic --revoked: %v", dyn)
	}
}
