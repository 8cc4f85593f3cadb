package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/id"
)

// apiKeysRevoke revokes a key of the current workspace: any of them for an
// admin, only their own for a member. A key of another workspace (or
// another member's, for a member) is the same 404 as an unknown one, and
// nothing is revoked.
func (u *UI) apiKeysRevoke(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ws, _ := workspaceFrom(r.Context())
	keyID, ok := id.Parse(id.APIKey, chi.URLParam(r, "key"))
	if !ok {
		u.notFound(w, r)
		return
	}
	owner := keyOwnerFilter(v, ws)
	name, found := "The key", false
	if keys, err := u.Keys.List(r.Context(), ws.ID, owner); err == nil {
		for _, k := range keys {
			if k.ID == keyID {
				name, found = "The key “"+k.Name+"”", true
			}
		}
	}
	back := "/w/" + ws.ExternalID() + "/settings/api-keys"
	if found && !u.confirmFirst(w, r, sectionAPIKeys, ConfirmView{
		Title: "Revoke this API key?", Button: "Revoke key", Back: back,
		Message: name + " stops working immediately: anything that uses it gets 401 Unauthorized. This cannot be undone.",
	}) {
		return
	}
	err := u.Keys.Revoke(r.Context(), ws.ID, keyID, owner)
	if u.failed(w, r, err) {
		return
	}
	u.redirectFlash(w, r, "/w/"+ws.ExternalID()+"/settings/api-keys", flashOK,
		name+" was revoked. Requests using it now get 401 Unauthorized.")
}
