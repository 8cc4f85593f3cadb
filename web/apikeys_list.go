package web

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/scope"
)

// apiKeysList shows the workspace's keys: admins see every key, members
// only the keys they created.
func (u *UI) apiKeysList(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ws, _ := workspaceFrom(r.Context())
	keys, err := u.Keys.List(r.Context(), ws.ID, keyOwnerFilter(v, ws))
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	creators := map[uuid.UUID]string{}
	if ws.IsAdmin() {
		members, err := u.Accounts.Members(r.Context(), ws.ID)
		if err != nil {
			u.serverError(w, r, err)
			return
		}
		for _, m := range members {
			creators[m.UserID] = m.Email
		}
	}
	rows := make([]APIKeyRow, len(keys))
	for i, k := range keys {
		rows[i] = keyRow(k, creators, v.User.ID)
	}
	Render(w, r, http.StatusOK, APIKeysPage(APIKeysView{Nav: u.nav(w, r, sectionAPIKeys), Keys: rows, AllKeys: ws.IsAdmin()}))
}

// keyOwnerFilter is the onlyCreator argument of apikey.Service: nil for
// admins (every key of the workspace), the viewer for members.
func keyOwnerFilter(v viewer, ws account.Workspace) *uuid.UUID {
	if ws.IsAdmin() {
		return nil
	}
	id := v.User.ID
	return &id
}

func keyRow(k apikey.Key, creators map[uuid.UUID]string, viewerID uuid.UUID) APIKeyRow {
	row := APIKeyRow{
		ID: k.ExternalID(), Name: k.Name, Hint: k.Hint(), Scopes: scope.Strings(k.Scopes),
		RateLimit: k.RateLimitPerMinute, CreatedAt: formatDate(k.CreatedAt), LastUsedAt: "never",
	}
	for _, p := range k.IPAllowlist {
		row.Allowlist = append(row.Allowlist, p.String())
	}
	if k.LastUsedAt != nil {
		row.LastUsedAt = formatTime(*k.LastUsedAt)
	}
	switch {
	case k.CreatedBy == nil:
		row.CreatedBy = "an operator command"
	case *k.CreatedBy == viewerID:
		row.CreatedBy = "you"
	case creators[*k.CreatedBy] != "":
		row.CreatedBy = creators[*k.CreatedBy]
	default:
		row.CreatedBy = "a former member"
	}
	return row
}
