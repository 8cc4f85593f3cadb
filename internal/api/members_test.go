package api_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/testkit"
)

// membersFixture: a workspace with its admin (the tenant) and a member,
// and a second workspace with its own admin and member, whose ids the
// first workspace's credentials must never reach. Keys are operator keys
// (no owner), which act as admins.
type membersFixture struct {
	srv                        *testkit.Server
	tenant, member             testkit.Tenant
	other, otherMember         testkit.Tenant
	token, readOnly, otherTk   string
	memberID, otherMemberID    string
	tenantID, otherAdminUserID string
}

func newMembersFixture(t *testing.T, opts ...testkit.ServerOption) *membersFixture {
	t.Helper()
	srv := testkit.StartServer(t, opts...)
	f := &membersFixture{srv: srv, tenant: testkit.NewTenant(t, srv.Pool), other: testkit.NewTenant(t, srv.Pool)}
	f.member = srv.AddMember(t, f.tenant, account.RoleMember)
	f.otherMember = srv.AddMember(t, f.other, account.RoleMember)
	f.token = srv.APIKey(t, f.tenant.WorkspaceID, "members:read", "members:write")
	f.readOnly = srv.APIKey(t, f.tenant.WorkspaceID, "members:read", "links:read", "links:write")
	f.otherTk = srv.APIKey(t, f.other.WorkspaceID, "members:read", "members:write")
	f.memberID = userID(f.member)
	f.otherMemberID = userID(f.otherMember)
	f.tenantID = userID(f.tenant)
	f.otherAdminUserID = userID(f.other)
	return f
}

func userID(tn testkit.Tenant) string { return id.Format(id.User, tn.UserID) }

// members lists every member of the token's workspace, walking the pages.
func (f *membersFixture) members(t *testing.T, token string, limit string) []map[string]any {
	t.Helper()
	var out []map[string]any
	path := "/api/v1/members?limit=" + limit
	for range 20 {
		page := testkit.JSON(t, f.srv.Do(t, "GET", path, token, ""), 200)
		for _, d := range page["data"].([]any) {
			out = append(out, d.(map[string]any))
		}
		if page["has_more"] != true {
			if page["next_cursor"] != nil {
				t.Errorf("last page next_cursor %v", page["next_cursor"])
			}
			return out
		}
		path = "/api/v1/members?limit=" + limit + "&cursor=" + url.QueryEscape(page["next_cursor"].(string))
	}
	t.Fatal("more than 20 pages of members")
	return nil
}

func roleOf(members []map[string]any, id string) string {
	for _, m := range members {
		if m["user_id"] == id {
			return m["role"].(string)
		}
	}
	return ""
}

func TestListMembers(t *testing.T) {
	t.Parallel()
	f := newMembersFixture(t)
	third := f.srv.AddMember(t, f.tenant, account.RoleAdmin)
	all := f.members(t, f.readOnly, "20")
	var ids []string
	for _, m := range all {
		ids = append(ids, m["user_id"].(string))
	}
	// Newest member first; each with the workspace's view of them.
	if want := []string{userID(third), f.memberID, f.tenantID}; !slices.Equal(ids, want) {
		t.Fatalf("members %v, want %v", ids, want)
	}
	for _, m := range all {
		if m["object"] != "member" || m["joined_at"] == nil {
			t.Errorf("member %v", m)
		}
	}
	if all[1]["email"] != f.member.Email || all[1]["role"] != "member" || all[2]["email"] != f.tenant.Email || all[2]["role"] != "admin" || all[0]["role"] != "admin" {
		t.Errorf("members %v", all)
	}
	// Pages of one give the same members in the same order.
	var paged []string
	for _, m := range f.members(t, f.readOnly, "1") {
		paged = append(paged, m["user_id"].(string))
	}
	if !slices.Equal(paged, ids) {
		t.Errorf("pages of one %v, want %v", paged, ids)
	}
	// Another workspace sees only its own.
	other := f.members(t, f.otherTk, "100")
	if len(other) != 2 || roleOf(other, f.otherAdminUserID) != "admin" || roleOf(other, f.otherMemberID) != "member" {
		t.Errorf("the other workspace lists %v", other)
	}

	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/members?cursor=nope", f.token, ""), 400, "invalid-request")
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "role=admin"} {
		p := testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/members?"+q, f.token, ""), 422, "validation-failed")
		if want := "/query/" + strings.SplitN(q, "=", 2)[0]; !hasPointer(p, want) {
			t.Errorf("?%s: errors %v lack %s", q, p["errors"], want)
		}
	}
	p := testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/members", f.srv.APIKey(t, f.tenant.WorkspaceID, "links:read"), ""), 403, "insufficient-scope")
	if p["required_scope"] != "members:read" {
		t.Errorf("403 %v", p)
	}
}

func TestUpdateMember(t *testing.T) {
	t.Parallel()
	f := newMembersFixture(t)
	// The other workspace's only admin, to show its last-admin rule is its own.
	cases := []struct {
		name   string
		token  string
		id     string
		body   string
		status int
		slug   string
		check  func(t *testing.T, got map[string]any)
	}{
		{name: "promote", token: f.token, id: f.memberID, body: `{"role":"admin"}`, status: 200, check: func(t *testing.T, got map[string]any) {
			if got["object"] != "member" || got["user_id"] != f.memberID || got["email"] != f.member.Email || got["role"] != "admin" {
				t.Errorf("promoted %v", got)
			}
		}},
		{name: "same role again", token: f.token, id: f.memberID, body: `{"role":"admin"}`, status: 200},
		// Two admins now: the tenant may step down.
		{name: "demote an admin who is not the last", token: f.token, id: f.tenantID, body: `{"role":"member"}`, status: 200},
		{name: "demote the last admin", token: f.token, id: f.memberID, body: `{"role":"member"}`, status: 409, slug: "conflict"},
		{name: "promote back", token: f.token, id: f.tenantID, body: `{"role":"admin"}`, status: 200},
		{name: "demote", token: f.token, id: f.memberID, body: `{"role":"member"}`, status: 200},
		{name: "last admin again", token: f.token, id: f.tenantID, body: `{"role":"member"}`, status: 409, slug: "conflict"},
		{name: "other workspace's member", token: f.token, id: f.otherMemberID, body: `{"role":"admin"}`, status: 404, slug: "not-found"},
		{name: "other workspace's admin", token: f.token, id: f.otherAdminUserID, body: `{"role":"member"}`, status: 404, slug: "not-found"},
		{name: "unknown user", token: f.token, id: id.Format(id.User, id.New()), body: `{"role":"admin"}`, status: 404, slug: "not-found"},
		{name: "malformed id", token: f.token, id: "usr_nope", body: `{"role":"admin"}`, status: 404, slug: "not-found"},
		{name: "another kind of id", token: f.token, id: id.Format(id.Link, f.member.UserID), body: `{"role":"admin"}`, status: 404, slug: "not-found"},
		{name: "bad role", token: f.token, id: f.memberID, body: `{"role":"owner"}`, status: 422, slug: "validation-failed"},
		{name: "role missing", token: f.token, id: f.memberID, body: `{}`, status: 422, slug: "validation-failed"},
		{name: "role null", token: f.token, id: f.memberID, body: `{"role":null}`, status: 422, slug: "validation-failed"},
		{name: "role not a string", token: f.token, id: f.memberID, body: `{"role":1}`, status: 422, slug: "validation-failed"},
		{name: "unknown field", token: f.token, id: f.memberID, body: `{"role":"admin","email":"x@example.com"}`, status: 422, slug: "validation-failed"},
		{name: "bad role for another workspace's member", token: f.token, id: f.otherMemberID, body: `{}`, status: 404, slug: "not-found"},
		{name: "without members:write", token: f.readOnly, id: f.memberID, body: `{"role":"admin"}`, status: 403, slug: "insufficient-scope"},
	}
	for _, c := range cases { // in order: each row starts from the state the rows above left
		resp := f.srv.Do(t, "PATCH", "/api/v1/members/"+c.id, c.token, c.body)
		if c.status == 200 {
			got := testkit.JSON(t, resp, 200)
			if c.check != nil {
				c.check(t, got)
			}
			continue
		}
		p := testkit.Problem(t, resp, c.status, c.slug)
		switch c.status {
		case 409:
			if d, _ := p["detail"].(string); !strings.Contains(d, "last admin") {
				t.Errorf("%s: detail %q does not say why", c.name, d)
			}
		case 422:
			want := "/role"
			if c.name == "unknown field" {
				want = "/email"
			}
			if !hasPointer(p, want) {
				t.Errorf("%s: errors %v lack %s", c.name, p["errors"], want)
			}
		case 403:
			if p["required_scope"] != "members:write" {
				t.Errorf("%s: %v", c.name, p)
			}
		}
	}
	// Nothing above changed the other workspace, and this one ends as it began.
	if got := f.members(t, f.otherTk, "100"); roleOf(got, f.otherMemberID) != "member" || roleOf(got, f.otherAdminUserID) != "admin" {
		t.Errorf("the other workspace's members %v", got)
	}
	if got := f.members(t, f.token, "100"); roleOf(got, f.memberID) != "member" || roleOf(got, f.tenantID) != "admin" {
		t.Errorf("members %v", got)
	}
}

func TestRemoveMember(t *testing.T) {
	t.Parallel()
	f := newMembersFixture(t)
	// A key the member made for this workspace: removing them revokes it.
	_, memberKey := f.srv.UserAPIKey(t, f.member, "links:read")
	testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/workspace", memberKey, ""), 200)

	for _, c := range []struct {
		name, token, id string
		status          int
		slug            string
	}{
		{"other workspace's member", f.token, f.otherMemberID, 404, "not-found"},
		{"unknown user", f.token, id.Format(id.User, id.New()), 404, "not-found"},
		{"malformed id", f.token, "usr_" + strings.Repeat("z", 26), 404, "not-found"},
		{"without members:write", f.readOnly, f.memberID, 403, "insufficient-scope"},
		{"the last admin", f.token, f.tenantID, 409, "conflict"},
		{"the member", f.token, f.memberID, 204, ""},
		{"the member again", f.token, f.memberID, 404, "not-found"},
	} {
		resp := f.srv.Do(t, "DELETE", "/api/v1/members/"+c.id, c.token, "")
		if c.status == 204 {
			resp.Body.Close()
			if resp.StatusCode != 204 {
				t.Fatalf("%s: %d", c.name, resp.StatusCode)
			}
			continue
		}
		p := testkit.Problem(t, resp, c.status, c.slug)
		if d, _ := p["detail"].(string); c.status == 409 && !strings.Contains(d, "last admin") {
			t.Errorf("%s: detail %q", c.name, d)
		}
	}
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/workspace", memberKey, ""), 401, "unauthorized")
	if got := f.members(t, f.token, "100"); len(got) != 1 || got[0]["user_id"] != f.tenantID {
		t.Errorf("members after removal %v", got)
	}
	if got := f.members(t, f.otherTk, "100"); len(got) != 2 {
		t.Errorf("the other workspace lost a member: %v", got)
	}
}

var acceptURL = regexp.MustCompile(`^http://[^/]+/invitations/[A-Za-z0-9_-]{43}$`)

func TestInvitations(t *testing.T) {
	t.Parallel()
	mb := testkit.StartMailbox(t)
	f := newMembersFixture(t, testkit.WithEnv("LINKQR_SMTP_URL", mb.URL()))
	ctx := context.Background()
	invitee := testkit.NewTenant(t, f.srv.Pool) // has an account, so the link can be accepted here

	resp := f.srv.Do(t, "POST", "/api/v1/invitations", f.token, `{"email":" `+strings.ToUpper(invitee.Email)+`","role":"member"}`, "Idempotency-Key", "invite-1")
	loc := resp.Header.Get("Location")
	inv := testkit.JSON(t, resp, 201)
	id, _ := inv["id"].(string)
	link, _ := inv["accept_url"].(string)
	if !strings.HasPrefix(id, "inv_") || loc != f.srv.URL+"/api/v1/invitations/"+id || !acceptURL.MatchString(link) || !strings.HasPrefix(link, f.srv.URL+"/") {
		t.Fatalf("created %v, Location %q", inv, loc)
	}
	// An operator key belongs to no user: the invitation names no inviter.
	if inv["object"] != "invitation" || inv["email"] != invitee.Email || inv["role"] != "member" || inv["invited_by"] != nil {
		t.Errorf("created %v", inv)
	}
	// Mailed, with the same link, as e-mail is on.
	if m := mb.Wait(invitee.Email, "Join"); !strings.Contains(m.Text, link) {
		t.Errorf("the invitation mail does not carry %s:\n%s", link, m.Text)
	}
	// A replay answers the same, link included, and invites no one again.
	replay := f.srv.Do(t, "POST", "/api/v1/invitations", f.token, `{"email":" `+strings.ToUpper(invitee.Email)+`","role":"member"}`, "Idempotency-Key", "invite-1")
	if replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Error("the replay is not marked")
	}
	if again := testkit.JSON(t, replay, 201); again["id"] != id || again["accept_url"] != link {
		t.Errorf("replay %v", again)
	}

	// Listed without the link; another workspace lists none of it.
	list := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/invitations", f.token, ""), 200)
	data := list["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["id"] != id || data[0].(map[string]any)["created_at"] != inv["created_at"] {
		t.Fatalf("listed %v", list)
	}
	if _, has := data[0].(map[string]any)["accept_url"]; has {
		t.Error("a listed invitation carries its link")
	}
	if other := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/invitations", f.otherTk, ""), 200); len(other["data"].([]any)) != 0 {
		t.Errorf("the other workspace lists %v", other)
	}

	// The link is the one that works.
	token := strings.TrimPrefix(link, f.srv.URL+"/invitations/")
	if _, err := f.srv.App.Accounts.AcceptInvitationLink(ctx, invitee.UserID, token); err != nil {
		t.Fatalf("accepting the link: %v", err)
	}
	if got := f.members(t, f.token, "100"); roleOf(got, userID(invitee)) != "member" {
		t.Errorf("members after accepting %v", got)
	}
	if list := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/invitations", f.token, ""), 200); len(list["data"].([]any)) != 0 {
		t.Errorf("an accepted invitation is still listed: %v", list)
	}
	// An accepted invitation cannot be revoked.
	testkit.Problem(t, f.srv.Do(t, "DELETE", "/api/v1/invitations/"+id, f.token, ""), 404, "not-found")
}

func TestInvitationPagesAndRevoke(t *testing.T) {
	t.Parallel()
	f := newMembersFixture(t)
	var made []string
	for i := range 3 {
		inv := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/invitations", f.token,
			`{"email":"guest`+string(rune('a'+i))+`@example.com","role":"admin"}`), 201)
		made = append(made, inv["id"].(string))
	}
	otherInv := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/invitations", f.otherTk, `{"email":"guest@example.com","role":"member"}`), 201)

	var got []string
	path := "/api/v1/invitations?limit=2"
	for range 5 {
		page := testkit.JSON(t, f.srv.Do(t, "GET", path, f.token, ""), 200)
		for _, d := range page["data"].([]any) {
			got = append(got, d.(map[string]any)["id"].(string))
		}
		if page["has_more"] != true {
			break
		}
		path = "/api/v1/invitations?limit=2&cursor=" + url.QueryEscape(page["next_cursor"].(string))
	}
	if want := []string{made[2], made[1], made[0]}; !slices.Equal(got, want) {
		t.Errorf("pages %v, want newest first %v", got, want)
	}
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/invitations?cursor=nope", f.token, ""), 400, "invalid-request")
	testkit.Problem(t, f.srv.Do(t, "GET", "/api/v1/invitations?limit=0", f.token, ""), 422, "validation-failed")

	for _, c := range []struct {
		name, method, path, token string
		status                    int
		slug                      string
	}{
		{"list without members:write", "GET", "/api/v1/invitations", f.readOnly, 403, "insufficient-scope"},
		{"revoke without members:write", "DELETE", "/api/v1/invitations/" + made[0], f.readOnly, 403, "insufficient-scope"},
		{"revoke another workspace's", "DELETE", "/api/v1/invitations/" + otherInv["id"].(string), f.token, 404, "not-found"},
		{"revoke an unknown one", "DELETE", "/api/v1/invitations/" + id.Format(id.Invitation, id.New()), f.token, 404, "not-found"},
		{"revoke a malformed id", "DELETE", "/api/v1/invitations/inv_x", f.token, 404, "not-found"},
		{"revoke", "DELETE", "/api/v1/invitations/" + made[0], f.token, 204, ""},
		{"revoke again", "DELETE", "/api/v1/invitations/" + made[0], f.token, 404, "not-found"},
	} {
		resp := f.srv.Do(t, c.method, c.path, c.token, "")
		if c.status == 204 {
			resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent {
				t.Fatalf("%s: %d", c.name, resp.StatusCode)
			}
			continue
		}
		testkit.Problem(t, resp, c.status, c.slug)
	}
	list := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/invitations", f.token, ""), 200)
	if data := list["data"].([]any); len(data) != 2 || data[1].(map[string]any)["id"] != made[1] {
		t.Errorf("after revoking %v", list)
	}
	if other := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/invitations", f.otherTk, ""), 200); len(other["data"].([]any)) != 1 {
		t.Errorf("the other workspace's invitation is gone: %v", other)
	}
}

func TestCreateInvitation422(t *testing.T) {
	t.Parallel()
	f := newMembersFixture(t)
	for _, c := range []struct{ body, pointer string }{
		{`{"role":"member"}`, "/email"},
		{`{"email":null,"role":"member"}`, "/email"},
		{`{"email":"not an address","role":"member"}`, "/email"},
		{`{"email":"` + f.member.Email + `","role":"admin"}`, "/email"}, // already a member
		{`{"email":"` + f.tenant.Email + `","role":"admin"}`, "/email"},
		{`{"email":"x@example.com"}`, "/role"},
		{`{"email":"x@example.com","role":"owner"}`, "/role"},
		{`{"email":"x@example.com","role":["admin"]}`, "/role"},
		{`{"email":"x@example.com","role":"member","accept_url":"https://evil.example/"}`, "/accept_url"},
	} {
		p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/invitations", f.token, c.body), 422, "validation-failed")
		if !hasPointer(p, c.pointer) {
			t.Errorf("%s: errors %v lack %s", c.body, p["errors"], c.pointer)
		}
	}
	// An address of another workspace's member is invited like any other.
	testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/invitations", f.token, `{"email":"`+f.otherMember.Email+`","role":"member"}`), 201)
	p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/invitations", f.readOnly, `{"email":"x@example.com","role":"member"}`), 403, "insufficient-scope")
	if p["required_scope"] != "members:write" {
		t.Errorf("403 %v", p)
	}
	if list := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/invitations", f.token, ""), 200); len(list["data"].([]any)) != 1 {
		t.Errorf("a refused invitation was made: %v", list)
	}
}

// TestInvitationNamesTheCredentialsOwner: an invitation made with a key a
// user minted names that user as its inviter.
func TestInvitationNamesTheCredentialsOwner(t *testing.T) {
	t.Parallel()
	f := newMembersFixture(t)
	_, own := f.srv.UserAPIKey(t, f.tenant, "members:read", "members:write")
	inv := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/invitations", own, `{"email":"owned@example.com","role":"member"}`), 201)
	want := map[string]any{"user_id": f.tenantID, "email": f.tenant.Email}
	by, _ := inv["invited_by"].(map[string]any)
	if by["user_id"] != want["user_id"] || by["email"] != want["email"] {
		t.Errorf("invited_by %v, want %v", inv["invited_by"], want)
	}
	list := testkit.JSON(t, f.srv.Do(t, "GET", "/api/v1/invitations", own, ""), 200)
	if by, _ := list["data"].([]any)[0].(map[string]any)["invited_by"].(map[string]any); by["user_id"] != want["user_id"] {
		t.Errorf("listed invited_by %v", by)
	}
}

// TestMembersAPIFollowsTheOwnersRole: a key acts as its owner at their
// role now. A member's key reads the members; an admin's key with the
// members:write scope loses it with the admin role (403 forbidden, not
// insufficient-scope), and an admin's key invites in their name.
func TestMembersAPIFollowsTheOwnersRole(t *testing.T) {
	t.Parallel()
	f := newMembersFixture(t)
	mint := func(owner testkit.Tenant, scopes ...string) string {
		t.Helper()
		_, token := f.srv.UserAPIKey(t, owner, scopes...)
		return token
	}
	reader := mint(f.member, "members:read")
	if got := f.members(t, reader, "100"); len(got) != 2 {
		t.Errorf("a member's key lists %v", got)
	}
	testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/members/"+f.memberID, f.token, `{"role":"admin"}`), 200)
	writer := mint(f.member, "members:read", "members:write")
	inv := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/invitations", writer, `{"email":"by-member@example.com","role":"admin"}`), 201)
	if by, _ := inv["invited_by"].(map[string]any); by["user_id"] != f.memberID || by["email"] != f.member.Email {
		t.Errorf("invited_by %v, want the key's owner %s", inv["invited_by"], f.memberID)
	}
	testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/members/"+f.memberID, f.token, `{"role":"member"}`), 200)
	for _, c := range []struct{ method, path, body string }{
		{"PATCH", "/api/v1/members/" + f.tenantID, `{"role":"member"}`},
		{"DELETE", "/api/v1/members/" + f.tenantID, ""},
		{"GET", "/api/v1/invitations", ""},
		{"POST", "/api/v1/invitations", `{"email":"again@example.com","role":"member"}`},
	} {
		p := testkit.Problem(t, f.srv.Do(t, c.method, c.path, writer, c.body), 403, "forbidden")
		if d, _ := p["detail"].(string); !strings.Contains(d, "admin") {
			t.Errorf("%s %s: detail %q does not name the role", c.method, c.path, d)
		}
	}
	if got := f.members(t, writer, "100"); roleOf(got, f.tenantID) != "admin" {
		t.Errorf("the demoted admin's key changed the admin: %v", got)
	}
}
