package api_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/linkqr/linkqr/internal/testkit"
)

// TestSSOConnectionAPI: GET/PUT /api/v1/sso and the domain verification,
// with a real provider's discovery (mockoidc in the test process): the
// secret is write-only and stored sealed, the issuer must be https or
// loopback, a domain is verified by its TXT record, another workspace can
// neither verify it too (409) nor reach this one's connection.
func TestSSOConnectionAPI(t *testing.T) {
	t.Parallel()
	f := newDomainsFixture(t)
	idp, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idp.Shutdown() })

	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/sso", f.token, ""), 404, "not-found")
	p := testkit.Problem(t, f.srv.Do(t, "PUT", "/api/v1/sso", f.token, `{"issuer":"http://login.example.com","client_id":"c","client_secret":"s"}`), 422, "validation-failed")
	if !strings.Contains(fmt.Sprint(p), "/issuer") {
		t.Errorf("plain http issuer: %v", p)
	}
	p = testkit.Problem(t, f.srv.Do(t, "PUT", "/api/v1/sso", f.token, `{"issuer":"`+idp.Issuer()+`","client_id":"c"}`), 422, "validation-failed")
	if !strings.Contains(fmt.Sprint(p), "/client_secret") {
		t.Errorf("no secret the first time: %v", p)
	}
	body := `{"issuer":"` + idp.Issuer() + `","client_id":"` + idp.ClientID + `","client_secret":"` + idp.ClientSecret + `","domains":["Acme-API.example.com"],"default_role":"member"}`
	c := testkit.JSON(t, f.srv.Do(t, "PUT", "/api/v1/sso", f.token, body), 200)
	ds, _ := c["domains"].([]any)
	if c["object"] != "sso_connection" || c["issuer"] != idp.Issuer() || c["client_secret"] != nil || len(ds) != 1 {
		t.Fatalf("PUT: %v", c)
	}
	d, _ := ds[0].(map[string]any)
	v, _ := d["verification"].(map[string]any)
	if d["domain"] != "acme-api.example.com" || d["status"] != "pending" || v["name"] != "_linkqr.acme-api.example.com" {
		t.Fatalf("domain %v", d)
	}
	var sealed []byte
	if err := f.srv.Pool.QueryRow(context.Background(), `SELECT client_secret_ciphertext FROM sso_connections WHERE workspace_id = $1`, f.tenant.WorkspaceID).Scan(&sealed); err != nil || bytes.Contains(sealed, []byte(idp.ClientSecret)) {
		t.Fatalf("the client secret is stored in the clear (%v)", err)
	}
	// Without client_secret the stored one stays.
	keep := `{"issuer":"` + idp.Issuer() + `","client_id":"` + idp.ClientID + `","domains":["acme-api.example.com"],"required":false}`
	testkit.JSON(t, f.srv.Do(t, "PUT", "/api/v1/sso", f.token, keep), 200)

	testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/sso/domains/acme-api.example.com/verify", f.token, ""), 422, "domain-not-verified")
	f.dns.SetTXT("_linkqr.acme-api.example.com", v["value"].(string))
	c = testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/sso/domains/acme-api.example.com/verify", f.token, ""), 200)
	if d := c["domains"].([]any)[0].(map[string]any); d["status"] != "verified" {
		t.Fatalf("after the TXT record: %v", c)
	}

	// Another workspace: no access to this connection, and the domain
	// cannot be verified twice.
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/sso", f.otherTk, ""), 404, "not-found")
	testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/sso/domains/acme-api.example.com/verify", f.otherTk, ""), 404, "not-found")
	o := testkit.JSON(t, f.srv.Do(t, "PUT", "/api/v1/sso", f.otherTk, body), 200)
	ov := o["domains"].([]any)[0].(map[string]any)["verification"].(map[string]any)
	f.dns.SetTXT("_linkqr.acme-api.example.com", ov["value"].(string))
	testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/sso/domains/acme-api.example.com/verify", f.otherTk, ""), 409, "conflict")
}
