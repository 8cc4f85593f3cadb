package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/id"
)

// apiKeysSetRateLimit changes a key's requests-per-minute limit: any key of
// the workspace for an admin, only their own for a member (another's is the
// same 404 as an unknown one). The new limit applies to the key's next API
// request on every instance.
func (u *UI) apiKeysSetRateLimit(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ws, _ := workspaceFrom(r.Context())
	keyID, ok := id.Parse(id.APIKey, chi.URLParam(r, "key"))
	if !ok {
		u.notFound(w, r)
		return
	}
	back := "/w/" + ws.ExternalID() + "/settings/api-keys"
	n, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue("rate_limit_per_minute")))
	if err != nil || apikey.ValidateRateLimit(n) != nil {
		u.redirectFlash(w, r, back, flashError, "The rate limit was not changed: it must be a whole number from "+
			strconv.Itoa(apikey.MinRateLimit)+" to "+strconv.Itoa(apikey.MaxRateLimit)+" requests per minute.")
		return
	}
	key, err := u.Keys.SetRateLimit(r.Context(), ws.ID, keyID, keyOwnerFilter(v, ws), n)
	if u.failed(w, r, err) {
		return
	}
	u.redirectFlash(w, r, back, flashOK, "The key “"+key.Name+"” now allows "+strconv.Itoa(n)+
		" requests per minute, from its next request on.")
}
