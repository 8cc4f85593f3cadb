package mcp

import (
	"context"
	"net/http"
	"net/url"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type memberRoleIn struct {
	UserID string `json:"user_id"`
	Role   string `json:"role"`
}

type memberIn struct {
	UserID string `json:"user_id"`
}

type createInvitationIn struct {
	Email          string `json:"email"`
	Role           string `json:"role"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

type invitationIn struct {
	InvitationID string `json:"invitation_id"`
}

func addMemberTools(s *sdk.Server, d *dispatcher) {
	userID := func() *jsonschema.Schema {
		return pattern(`The member's user id, "usr_" followed by 26 characters, as list_members returns it.`, `^usr_[0-9a-z]{26}$`)
	}
	role := func(desc string) *jsonschema.Schema { return enum(desc, "admin", "member") }

	sdk.AddTool(s, &sdk.Tool{
		Name: "list_members",
		Description: "List the people of the workspace, newest member first (scope members:read): user_id (usr_…), email, role " +
			"(admin: every scope; member: links, analytics, reading domains and members) and joined_at. Paged like list_links.",
		Annotations: readOnly("List Members"),
		InputSchema: object(nil, map[string]*jsonschema.Schema{"limit": pageLimit(), "cursor": pageCursor()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in pageIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodGet, path: "/members", query: in.query()})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "update_member_role",
		Description: "Make a member an admin or a member (scope members:write). Returns the member. The workspace's last admin " +
			"cannot be demoted (a conflict error): make another member an admin first.",
		Annotations: mutating("Update Member Role", false, true),
		InputSchema: object([]string{"user_id", "role"}, map[string]*jsonschema.Schema{
			"user_id": userID(),
			"role":    role("The new role."),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in memberRoleIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodPatch, path: "/members/" + url.PathEscape(in.UserID), body: map[string]any{"role": in.Role}})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "remove_member",
		Description: "Remove someone from the workspace (scope members:write); the API keys, OAuth clients and app authorizations " +
			"they made for it are revoked at once. Their account stays. The workspace's last admin cannot be removed (a conflict error). " +
			"Confirm with the user first.",
		Annotations: mutating("Remove Member", true, true),
		InputSchema: object([]string{"user_id"}, map[string]*jsonschema.Schema{"user_id": userID()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in memberIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodDelete, path: "/members/" + url.PathEscape(in.UserID)})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "list_invitations",
		Description: "List the workspace's open invitations, newest first (scope members:write): id (inv_…), email, role, " +
			"invited_by ({user_id, email} or null), created_at, expires_at. Their accept links are never listed. Paged like list_links.",
		Annotations: readOnly("List Invitations"),
		InputSchema: object(nil, map[string]*jsonschema.Schema{"limit": pageLimit(), "cursor": pageCursor()}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in pageIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodGet, path: "/invitations", query: in.query()})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name: "create_invitation",
		Description: "Invite an e-mail address to join the workspace as admin or member, for 14 days (scope members:write). The answer " +
			"holds accept_url, the link the invitee opens to join — shown only this once; it is also e-mailed when the server sends " +
			"e-mail. Inviting an address again replaces its open invitation. An address that already belongs to the workspace is a validation error.",
		Annotations: mutating("Create Invitation", false, false),
		InputSchema: object([]string{"email", "role"}, map[string]*jsonschema.Schema{
			"email":           strLen("The address to invite, e.g. grace@example.com.", 1, 254),
			"role":            role("The role the invitee gets on accepting: admin (every scope) or member."),
			"idempotency_key": idempotencyKey(),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in createInvitationIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodPost, path: "/invitations", body: map[string]any{"email": in.Email, "role": in.Role},
			idempotencyKey: in.IdempotencyKey})
	})

	sdk.AddTool(s, &sdk.Tool{
		Name:        "revoke_invitation",
		Description: "Withdraw an open invitation (scope members:write): its accept link stops working. One no longer open is a not-found error.",
		Annotations: mutating("Revoke Invitation", true, true),
		InputSchema: object([]string{"invitation_id"}, map[string]*jsonschema.Schema{
			"invitation_id": pattern(`The invitation's id, "inv_" followed by 26 characters, as list_invitations returns it.`, `^inv_[0-9a-z]{26}$`),
		}),
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in invitationIn) (*sdk.CallToolResult, any, error) {
		return d.run(ctx, call{method: http.MethodDelete, path: "/invitations/" + url.PathEscape(in.InvitationID)})
	})
}
