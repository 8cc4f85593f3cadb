package audit_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oauth2-proxy/mockoidc"
	"github.com/pquerna/otp/totp"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/app"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/export"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/qrdesign"
	"github.com/linkqr/linkqr/internal/retention"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/sso"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/tz"
	"github.com/linkqr/linkqr/internal/utmtemplate"
	"github.com/linkqr/linkqr/internal/webhook"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// rig is a running linkqr with a workspace whose admin acts in ctx.
type rig struct {
	srv    *testkit.Server
	app    *app.App
	pool   *pgxpool.Pool
	dns    *testkit.DNSServer
	tenant testkit.Tenant
	ws     uuid.UUID
	actor  audit.Actor
	ctx    context.Context // the admin's requests
	setup  context.Context // how the test prepares: as the operator
}

func newRig(t *testing.T) *rig {
	t.Helper()
	dns := testkit.StartDNS(t)
	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_DNS_RESOLVER", dns.Addr), testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	tn := testkit.NewTenant(t, srv.Pool)
	uid := tn.UserID
	a := audit.Actor{Type: audit.ActorUser, ID: id.Format(id.User, uid), UserID: &uid, Email: tn.Email,
		IP: netip.MustParseAddr("203.0.113.7"), UserAgent: "audit-test/1"}
	return &rig{
		srv: srv, app: srv.App, pool: srv.Pool, dns: dns, tenant: tn, ws: tn.WorkspaceID, actor: a,
		ctx:   audit.WithActor(context.Background(), a),
		setup: audit.WithActor(context.Background(), audit.Actor{Type: audit.ActorOperator}),
	}
}

// count is how many entries of action the workspace has.
func (r *rig) count(t *testing.T, action audit.Action) int {
	t.Helper()
	n := 0
	err := audit.Each(context.Background(), r.app.DB, r.ws, audit.Filter{Action: string(action)}, func(audit.Entry) error { n++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (r *rig) latest(t *testing.T, action audit.Action) audit.Entry {
	t.Helper()
	p, err := audit.List(context.Background(), r.app.DB, r.ws, audit.Filter{Action: string(action)}, nil, 1)
	if err != nil || len(p.Entries) == 0 {
		t.Fatalf("no %s entry: %v", action, err)
	}
	return p.Entries[0]
}

func (r *rig) scalar(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := r.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// newUser is a second person with an account (and a workspace of their own).
func (r *rig) newUser(t *testing.T) testkit.Tenant { return testkit.NewTenant(t, r.pool) }

// member makes a new user a member of the workspace (invited, accepted).
func (r *rig) member(t *testing.T) testkit.Tenant {
	t.Helper()
	u := r.newUser(t)
	inv, err := r.app.Accounts.Invite(r.setup, r.ws, &r.tenant.UserID, u.Email, account.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.app.Accounts.AcceptInvitation(context.Background(), u.UserID, inv.ID); err != nil {
		t.Fatal(err)
	}
	return u
}

// utmInput is a UTM template's parsed fields: a name and utm_source.
func utmInput(t *testing.T, name, source string) utmtemplate.Input {
	t.Helper()
	var values [5]string
	values[0] = source
	in, err := utmtemplate.ParseInput(name, values)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// partnerCode is an authorization code of a new partner app that the
// tenant consented to, ready to redeem.
type partnerCode struct {
	client   *oauth.Client
	code     string
	verifier string
}

const partnerRedirect = "https://partner.example.com/callback"

func (r *rig) partnerCode(t *testing.T, name string) partnerCode {
	t.Helper()
	c, _, err := r.app.OAuth.CreateClient(r.setup, oauth.CreateInput{
		GrantType: oauth.GrantAuthorizationCode, Name: name, Scopes: []string{"links:read"},
		RedirectURIs: []string{partnerRedirect}, Public: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	verifier := strings.Repeat("v", 50)
	sum := sha256.Sum256([]byte(verifier))
	code, err := r.app.OAuth.IssueCode(context.Background(), oauth.CodeRequest{
		Client: c, UserID: r.tenant.UserID, WorkspaceID: r.ws, RedirectURI: partnerRedirect,
		Scopes: []scope.Scope{scope.LinksRead}, CodeChallenge: base64.RawURLEncoding.EncodeToString(sum[:]),
	})
	if err != nil {
		t.Fatal(err)
	}
	return partnerCode{client: c, code: code, verifier: verifier}
}

func (p partnerCode) redeem(ctx context.Context, r *rig) error {
	_, err := r.app.OAuth.AuthorizationCode(ctx, oauth.ClientAuth{ClientID: p.client.ExternalID()}, p.code, partnerRedirect, p.verifier, nil)
	return err
}

// change is one audited change: prepare makes what it needs and returns
// do (the change through its domain service, as the actor of ctx) and
// happened (whether the change is in the database).
type change struct {
	action  audit.Action
	target  string // the target's type
	prepare func(t *testing.T, r *rig, n int) (do func(ctx context.Context) error, happened func() bool)
	// asUser, when set, is the actor the change is made by instead of the
	// rig's admin (a user joining), with the system in ctx.
	asSystem bool
	wantType audit.ActorType
	changes  []string // fields the entry's changes must name
}

func changes() []change {
	url := func(n int) string { return fmt.Sprintf("http://127.0.0.1:%d/hook", 9000+n) }
	newHook := func(t *testing.T, r *rig, n int) webhook.Resource {
		t.Helper()
		h, err := r.app.Webhooks.Create(r.setup, r.ws, webhook.CreateInput{URL: url(n), Events: []string{"link.created"}})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	newDomain := func(t *testing.T, r *rig, n int) domain.Domain {
		t.Helper()
		h, err := r.app.Domains.ParseHostname(fmt.Sprintf("go%d.audit.example.com", n))
		if err != nil {
			t.Fatal(err)
		}
		d, err := r.app.Domains.Create(r.setup, r.ws, h)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	return []change{
		{action: audit.APIKeyCreated, target: "api_key", changes: []string{"name", "scopes"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				name := fmt.Sprintf("key %d", n)
				return func(ctx context.Context) error {
						_, _, err := r.app.Keys.Create(ctx, r.ws, &r.tenant.UserID, apikey.CreateInput{Name: name, Scopes: []string{"links:read"}})
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM api_keys WHERE workspace_id = $1 AND name = $2", r.ws, name) == 1
					}
			}},
		{action: audit.APIKeyRevoked, target: "api_key",
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				k, _, err := r.app.Keys.Create(r.setup, r.ws, nil, apikey.CreateInput{Name: "to revoke", Scopes: []string{"links:read"}})
				if err != nil {
					t.Fatal(err)
				}
				return func(ctx context.Context) error { return r.app.Keys.Revoke(ctx, r.ws, k.ID, nil) },
					func() bool {
						return r.scalar(t, "SELECT count(*) FROM api_keys WHERE id = $1 AND revoked_at IS NOT NULL", k.ID) == 1
					}
			}},
		{action: audit.OAuthClientCreated, target: "oauth_client", changes: []string{"name", "grant_type", "scopes"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				name := fmt.Sprintf("client %d", n)
				return func(ctx context.Context) error {
						_, _, err := r.app.OAuth.CreateClient(ctx, oauth.CreateInput{GrantType: oauth.GrantClientCredentials, WorkspaceID: &r.ws,
							CreatedBy: &r.tenant.UserID, Name: name, Scopes: []string{"links:read"}})
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM oauth_clients WHERE workspace_id = $1 AND name = $2", r.ws, name) == 1
					}
			}},
		{action: audit.OAuthClientRevoked, target: "oauth_client",
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				c, _, err := r.app.OAuth.CreateClient(r.setup, oauth.CreateInput{GrantType: oauth.GrantClientCredentials, WorkspaceID: &r.ws,
					Name: "to revoke", Scopes: []string{"links:read"}})
				if err != nil {
					t.Fatal(err)
				}
				return func(ctx context.Context) error { return r.app.OAuth.RevokeClient(ctx, r.ws, c.ID) },
					func() bool {
						return r.scalar(t, "SELECT count(*) FROM oauth_clients WHERE id = $1 AND revoked_at IS NOT NULL", c.ID) == 1
					}
			}},
		{action: audit.OAuthGrantCreated, target: "oauth_grant", changes: []string{"client_id", "user_id"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				p := r.partnerCode(t, fmt.Sprintf("partner %d", n))
				return func(ctx context.Context) error { return p.redeem(ctx, r) },
					func() bool {
						return r.scalar(t, "SELECT count(*) FROM oauth_grants WHERE client_id = $1", p.client.ID) == 1
					}
			}},
		{action: audit.OAuthGrantRevoked, target: "oauth_grant",
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				p := r.partnerCode(t, fmt.Sprintf("partner to revoke %d", n))
				if err := p.redeem(r.setup, r); err != nil {
					t.Fatal(err)
				}
				var grant uuid.UUID
				if err := r.pool.QueryRow(context.Background(), "SELECT id FROM oauth_grants WHERE client_id = $1", p.client.ID).Scan(&grant); err != nil {
					t.Fatal(err)
				}
				return func(ctx context.Context) error { return r.app.OAuth.RevokeGrantOfUser(ctx, r.tenant.UserID, grant) },
					func() bool {
						return r.scalar(t, "SELECT count(*) FROM oauth_grants WHERE id = $1 AND revoked_at IS NOT NULL", grant) == 1
					}
			}},
		{action: audit.WebhookCreated, target: "webhook", changes: []string{"url", "events"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				return func(ctx context.Context) error {
						_, err := r.app.Webhooks.Create(ctx, r.ws, webhook.CreateInput{URL: url(100 + n), Events: []string{"link.created"}})
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM webhook_subscriptions WHERE workspace_id = $1 AND url = $2", r.ws, url(100+n)) == 1
					}
			}},
		{action: audit.WebhookUpdated, target: "webhook", changes: []string{"url"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				h := newHook(t, r, 200+n)
				return func(ctx context.Context) error {
						_, err := r.app.Webhooks.Update(ctx, r.ws, h.ID, webhook.UpdateInput{URL: webhook.Some(url(300 + n))})
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM webhook_subscriptions WHERE id = $1 AND url = $2", h.ID, url(300+n)) == 1
					}
			}},
		{action: audit.WebhookDeleted, target: "webhook",
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				h := newHook(t, r, 400+n)
				return func(ctx context.Context) error { return r.app.Webhooks.Delete(ctx, r.ws, h.ID) },
					func() bool { return r.scalar(t, "SELECT count(*) FROM webhook_subscriptions WHERE id = $1", h.ID) == 0 }
			}},
		{action: audit.WebhookSecretRotated, target: "webhook",
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				h := newHook(t, r, 500+n)
				return func(ctx context.Context) error {
						_, err := r.app.Webhooks.RotateSecret(ctx, r.ws, h.ID)
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM webhook_subscriptions WHERE id = $1 AND previous_secret_ciphertext IS NOT NULL", h.ID) == 1
					}
			}},
		{action: audit.WebhookDisabled, target: "webhook", changes: []string{"status"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				h := newHook(t, r, 600+n)
				return func(ctx context.Context) error {
						_, err := r.app.Webhooks.Update(ctx, r.ws, h.ID, webhook.UpdateInput{Status: webhook.Some(webhook.StatusDisabled)})
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM webhook_subscriptions WHERE id = $1 AND status = 'disabled'", h.ID) == 1
					}
			}},
		{action: audit.DomainCreated, target: "domain", changes: []string{"hostname"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				h, err := r.app.Domains.ParseHostname(fmt.Sprintf("new%d.audit.example.com", n))
				if err != nil {
					t.Fatal(err)
				}
				return func(ctx context.Context) error {
						_, err := r.app.Domains.Create(ctx, r.ws, h)
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM domains WHERE workspace_id = $1 AND hostname = $2", r.ws, h.String()) == 1
					}
			}},
		{action: audit.DomainVerified, target: "domain", changes: []string{"status"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				d := newDomain(t, r, 100+n)
				r.dns.SetTXT(domain.RecordName(d.Hostname), d.RecordValue())
				return func(ctx context.Context) error {
						_, err := r.app.Domains.Verify(ctx, r.ws, d.ID)
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM domains WHERE id = $1 AND status = 'verified'", d.ID) == 1
					}
			}},
		{action: audit.DomainUpdated, target: "domain", changes: []string{"root_url"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				d := newDomain(t, r, 200+n)
				u, err := link.ParseTargetURL("https://example.com/home")
				if err != nil {
					t.Fatal(err)
				}
				return func(ctx context.Context) error {
						_, err := r.app.Domains.Update(ctx, r.ws, d.ID, domain.UpdateInput{RootURL: link.Some(&u)})
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM domains WHERE id = $1 AND root_url IS NOT NULL", d.ID) == 1
					}
			}},
		{action: audit.DomainDeleted, target: "domain", changes: []string{"hostname"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				d := newDomain(t, r, 300+n)
				return func(ctx context.Context) error { return r.app.Domains.Delete(ctx, r.ws, d.ID) },
					func() bool { return r.scalar(t, "SELECT count(*) FROM domains WHERE id = $1", d.ID) == 0 }
			}},
		{action: audit.MemberInvited, target: "invitation", changes: []string{"email", "role"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				email := fmt.Sprintf("invitee%d-%s@example.com", n, r.ws.String()[:8])
				return func(ctx context.Context) error {
						_, err := r.app.Accounts.Invite(ctx, r.ws, &r.tenant.UserID, email, account.RoleMember)
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM invitations WHERE workspace_id = $1 AND email = $2", r.ws, email) == 1
					}
			}},
		{action: audit.MemberJoined, target: "member", asSystem: true, wantType: audit.ActorUser, changes: []string{"role"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				u := r.newUser(t)
				inv, err := r.app.Accounts.Invite(r.setup, r.ws, &r.tenant.UserID, u.Email, account.RoleMember)
				if err != nil {
					t.Fatal(err)
				}
				return func(ctx context.Context) error {
						_, err := r.app.Accounts.AcceptInvitation(ctx, u.UserID, inv.ID)
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM memberships WHERE workspace_id = $1 AND user_id = $2", r.ws, u.UserID) == 1
					}
			}},
		{action: audit.MemberRoleChanged, target: "member", changes: []string{"role"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				u := r.member(t)
				return func(ctx context.Context) error {
						_, err := r.app.Accounts.SetRole(ctx, r.ws, u.UserID, account.RoleAdmin)
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM memberships WHERE workspace_id = $1 AND user_id = $2 AND role = 'admin'", r.ws, u.UserID) == 1
					}
			}},
		{action: audit.MemberRemoved, target: "member", changes: []string{"email", "role"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				u := r.member(t)
				return func(ctx context.Context) error {
						_, _, err := r.app.Accounts.RemoveMember(ctx, r.ws, u.UserID)
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM memberships WHERE workspace_id = $1 AND user_id = $2", r.ws, u.UserID) == 0
					}
			}},
		{action: audit.InvitationRevoked, target: "invitation",
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				inv, err := r.app.Accounts.Invite(r.setup, r.ws, &r.tenant.UserID, fmt.Sprintf("revoked%d-%s@example.com", n, r.ws.String()[:8]), account.RoleMember)
				if err != nil {
					t.Fatal(err)
				}
				return func(ctx context.Context) error {
						_, err := r.app.Accounts.RevokeInvitation(ctx, r.ws, inv.ID)
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM invitations WHERE id = $1 AND status = 'revoked'", inv.ID) == 1
					}
			}},
		{action: audit.WorkspaceRenamed, target: "workspace", changes: []string{"name"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				name := fmt.Sprintf("Renamed %d", n)
				return func(ctx context.Context) error {
						_, err := r.app.Accounts.RenameWorkspace(ctx, r.ws, name)
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM workspaces WHERE id = $1 AND name = $2", r.ws, name) == 1
					}
			}},
		{action: audit.WorkspaceTimezoneChanged, target: "workspace", changes: []string{"timezone"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				zone := tz.MustParse(tz.Common[1+n%(len(tz.Common)-1)])
				return func(ctx context.Context) error {
						return r.app.Accounts.SetTimezone(ctx, r.ws, zone)
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM workspaces WHERE id = $1 AND timezone = $2", r.ws, zone.Name()) == 1
					}
			}},
		{action: audit.WorkspaceExported, target: "workspace",
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				return func(ctx context.Context) error {
					_, err := export.New(r.app.DB, app.Origins(r.app.Config)).Workspace(ctx, r.ws, io.Discard)
					return err
				}, nil // an export changes nothing but the log
			}},
		{action: audit.WorkspaceQRStyleUpdated, target: "workspace", changes: []string{"margin"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				margin := 6 + n%2
				return func(ctx context.Context) error {
						_, err := r.app.Designs.PutDefault(ctx, r.ws, qrdesign.Update{Margin: link.Some(margin)})
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM qr_designs WHERE workspace_id = $1 AND link_id IS NULL AND margin = $2", r.ws, margin) == 1
					}
			}},
		{action: audit.WorkspaceRetentionChanged, target: "workspace", changes: []string{"scan_retention_months"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				m, err := retention.ParseScanMonths(fmt.Sprint(6 + n))
				if err != nil {
					t.Fatal(err)
				}
				return func(ctx context.Context) error { return retention.SetScanMonths(ctx, r.app.DB, r.ws, m) },
					func() bool {
						return r.scalar(t, "SELECT count(*) FROM workspaces WHERE id = $1 AND scan_retention_months = $2", r.ws, 6+n) == 1
					}
			}},
		{action: audit.LinksImported, target: "workspace", changes: []string{"file", "rows"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				up, err := r.app.LinkImports.Receive(r.setup, r.ws, r.tenant.UserID, "links.csv", strings.NewReader("target_url\nhttps://example.com/imported\n"))
				if err == nil {
					err = r.app.LinkImports.Keep(r.setup, r.ws, up, false)
				}
				if err != nil {
					t.Fatal(err)
				}
				id := up.ID
				return func(ctx context.Context) error { return r.app.LinkImports.Start(ctx, r.ws, r.tenant.UserID, id) },
					func() bool {
						return r.scalar(t, "SELECT count(*) FROM link_imports WHERE id = $1 AND state <> 'uploaded'", id) == 1
					}
			}},
		{action: audit.LinksBulkDeleted, target: "workspace", changes: []string{"links", "count"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				var ids []uuid.UUID
				for i := range 2 {
					u, err := link.ParseTargetURL(fmt.Sprintf("https://example.com/bulk/%d/%d", n, i))
					if err != nil {
						t.Fatal(err)
					}
					l, err := r.app.Links.Create(r.setup, r.ws, link.CreateInput{TargetURL: u})
					if err != nil {
						t.Fatal(err)
					}
					ids = append(ids, l.ID)
				}
				return func(ctx context.Context) error {
						_, err := r.app.Links.DeleteMany(ctx, r.ws, append(ids, uuid.New()), false)
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM links WHERE id = ANY($1) AND deleted_at IS NOT NULL", ids) == 2
					}
			}},
		{action: audit.UTMTemplateCreated, target: "utm_template", changes: []string{"name", "utm_source"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				name := fmt.Sprintf("Created %d", n)
				in := utmInput(t, name, "newsletter")
				return func(ctx context.Context) error {
						_, err := r.app.UTMTemplates.Create(ctx, r.ws, in)
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM utm_templates WHERE workspace_id = $1 AND name = $2", r.ws, name) == 1
					}
			}},
		{action: audit.UTMTemplateUpdated, target: "utm_template", changes: []string{"utm_source"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				name := fmt.Sprintf("Updated %d", n)
				tpl, err := r.app.UTMTemplates.Create(r.setup, r.ws, utmInput(t, name, "before"))
				if err != nil {
					t.Fatal(err)
				}
				return func(ctx context.Context) error {
						_, err := r.app.UTMTemplates.Update(ctx, r.ws, tpl.ID, utmInput(t, name, "after"))
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM utm_templates WHERE id = $1 AND utm_source = 'after'", tpl.ID) == 1
					}
			}},
		{action: audit.UTMTemplateDeleted, target: "utm_template", changes: []string{"name", "utm_source"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				tpl, err := r.app.UTMTemplates.Create(r.setup, r.ws, utmInput(t, fmt.Sprintf("Deleted %d", n), "gone"))
				if err != nil {
					t.Fatal(err)
				}
				return func(ctx context.Context) error {
						_, err := r.app.UTMTemplates.Delete(ctx, r.ws, tpl.ID)
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM utm_templates WHERE id = $1", tpl.ID) == 0
					}
			}},
		{action: audit.SSOUpdated, target: "workspace", changes: []string{"issuer", "client_id", "domains"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				idp, err := mockoidc.Run()
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = idp.Shutdown() })
				client := fmt.Sprintf("client-%d", n)
				return func(ctx context.Context) error {
						_, err := r.app.SSO.Put(ctx, r.ws, sso.PutInput{Issuer: idp.Issuer(), ClientID: client, ClientSecret: "s3cret",
							Domains: []string{fmt.Sprintf("sso%d.audit.example.com", n)}})
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM sso_connections WHERE workspace_id = $1 AND client_id = $2", r.ws, client) == 1
					}
			}},
		{action: audit.TwoFactorRequired, target: "workspace", changes: []string{"required"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				return func(ctx context.Context) error { return r.app.TwoFactor.SetRequired(ctx, r.ws, true) },
					func() bool {
						return r.scalar(t, "SELECT count(*) FROM workspace_two_factor WHERE workspace_id = $1 AND required", r.ws) == 1
					}
			}},
		{action: audit.TwoFactorEnrolled, target: "member", changes: []string{"factor"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				u := r.member(t)
				e, err := r.app.TwoFactor.StartTOTP(r.setup, u.UserID, u.Email)
				if err != nil {
					t.Fatal(err)
				}
				return func(ctx context.Context) error {
						code, err := totp.GenerateCode(e.Secret, time.Now())
						if err != nil {
							return err
						}
						_, err = r.app.TwoFactor.ConfirmTOTP(ctx, u.UserID, code)
						return err
					}, func() bool {
						return r.scalar(t, "SELECT count(*) FROM totp_factors WHERE user_id = $1 AND confirmed_at IS NOT NULL", u.UserID) == 1
					}
			}},
		{action: audit.TwoFactorRemoved, target: "member", changes: []string{"factor"},
			prepare: func(t *testing.T, r *rig, n int) (func(context.Context) error, func() bool) {
				u := r.member(t)
				e, err := r.app.TwoFactor.StartTOTP(r.setup, u.UserID, u.Email)
				if err != nil {
					t.Fatal(err)
				}
				code, _ := totp.GenerateCode(e.Secret, time.Now())
				if _, err := r.app.TwoFactor.ConfirmTOTP(r.setup, u.UserID, code); err != nil {
					t.Fatal(err)
				}
				return func(ctx context.Context) error { return r.app.TwoFactor.RemoveTOTP(ctx, u.UserID) },
					func() bool { return r.scalar(t, "SELECT count(*) FROM totp_factors WHERE user_id = $1", u.UserID) == 0 }
			}},
	}
}

// TestEveryAuditedChangeCommitsWithItsEntry: for every action, the change
// made through its domain service with a failure injected right after the
// entry is written leaves neither the change nor the entry; made again
// without it, it writes exactly one entry with the actor, target and
// changes, and the workspace's chain verifies.
func TestEveryAuditedChangeCommitsWithItsEntry(t *testing.T) {
	r := newRig(t)
	cases := changes()
	seen := map[audit.Action]bool{}
	for i, c := range cases {
		seen[c.action] = true
		t.Run(string(c.action), func(t *testing.T) {
			ctx := r.ctx
			if c.asSystem {
				ctx = context.Background()
			}
			before := r.count(t, c.action)
			do, happened := c.prepare(t, r, 2*i)
			if err := do(audit.FailAfterRecord(ctx)); !errors.Is(err, audit.ErrInjected) {
				t.Fatalf("with the failure injected: %v, want audit.ErrInjected", err)
			}
			if happened != nil && happened() {
				t.Error("the change happened although its audit entry failed")
			}
			if n := r.count(t, c.action); n != before {
				t.Errorf("%d entries after the failed change, want %d", n, before)
			}

			do, happened = c.prepare(t, r, 2*i+1)
			if err := do(ctx); err != nil {
				t.Fatal(err)
			}
			if happened != nil && !happened() {
				t.Error("the change did not happen")
			}
			if n := r.count(t, c.action); n != before+1 {
				t.Fatalf("%d entries after the change, want %d", n, before+1)
			}
			e := r.latest(t, c.action)
			want := c.wantType
			if want == "" {
				want = audit.ActorUser
			}
			if e.Actor.Type != want {
				t.Errorf("actor %+v, want type %s", e.Actor, want)
			}
			if !c.asSystem && (e.Actor.ID == nil || *e.Actor.ID != r.actor.ID || e.Actor.Email == nil || *e.Actor.Email != r.tenant.Email ||
				e.IP == nil || *e.IP != "203.0.113.7" || e.UserAgent == nil || *e.UserAgent != "audit-test/1") {
				t.Errorf("actor %+v ip %v ua %v, want the admin's request", e.Actor, e.IP, e.UserAgent)
			}
			if e.Target.Type != c.target || !strings.Contains(e.Target.ID, "_") {
				t.Errorf("target %+v, want a %s", e.Target, c.target)
			}
			for _, f := range c.changes {
				if !strings.Contains(string(e.Changes), `"`+f+`":[`) {
					t.Errorf("changes %s lack %s", e.Changes, f)
				}
			}
		})
	}
	for _, a := range audit.Actions {
		if !seen[a] {
			t.Errorf("no test changes %s", a)
		}
	}
	v, err := audit.Verify(context.Background(), r.app.DB, r.ws)
	if err != nil || !v.OK || v.Entries < len(cases) {
		t.Fatalf("Verify after every change = %+v, %v", v, err)
	}
}
