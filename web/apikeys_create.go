package web

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/secrethash"
	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/internal/validate"
)

// apiKeysNew shows the empty create form.
func (u *UI) apiKeysNew(w http.ResponseWriter, r *http.Request) {
	Render(w, r, http.StatusOK, APIKeyNewPage(APIKeyFormView{
		Nav: u.nav(w, r, sectionAPIKeys), Scopes: scopeOptions(r, defaultKeyScopes), Withheld: withheldScopes(r), RateLimit: strconv.Itoa(apikey.DefaultRateLimit),
	}))
}

// apiKeysCreate mints a key for the viewer and redirects (POST-redirect-
// GET) to the page that shows its secret once. Invalid input re-renders
// the form with apikey's messages next to each field.
func (u *UI) apiKeysCreate(w http.ResponseWriter, r *http.Request) {
	v, _ := viewerFrom(r.Context())
	ws, _ := workspaceFrom(r.Context())
	form := parseKeyForm(r)
	if err := errorsOf(form.errs, form.input.Validate()); err != nil {
		u.apiKeyFormFailed(w, r, form, err)
		return
	}
	key, secret, err := u.Keys.Create(r.Context(), ws.ID, &v.User.ID, form.input)
	var verrs validate.Errors
	if errors.As(err, &verrs) {
		u.apiKeyFormFailed(w, r, form, err)
		return
	}
	if errors.Is(err, secrethash.ErrBusy) {
		setRetryAfter(w, secrethash.RetryAfter)
		view := u.apiKeyFormView(w, r, form)
		view.Nav.Flashes = append(view.Nav.Flashes, session.Flash{Kind: flashError, Message: "The key was not created: " + busyMessage})
		Render(w, r, secrethash.Status(err), APIKeyNewPage(view))
		return
	}
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	session.SetNewKey(v.Session, session.NewKey{WorkspaceID: ws.ExternalID(), KeyID: key.ExternalID(), Name: key.Name, Secret: secret})
	if !u.save(w, r, v.Session) {
		return
	}
	http.Redirect(w, r, "/w/"+ws.ExternalID()+"/settings/api-keys/created", http.StatusSeeOther)
}

// keyForm is the posted create form: what apikey validates, plus what the
// form needs to be shown again.
type keyForm struct {
	input     apikey.CreateInput
	rateLimit string
	allowlist string
	lines     []int // the textarea line of each allowlist entry (1-based)
	errs      validate.Errors
}

func parseKeyForm(r *http.Request) keyForm {
	_ = r.ParseForm()
	f := keyForm{
		input:     apikey.CreateInput{Name: r.PostFormValue("name"), Scopes: r.PostForm["scopes"]},
		rateLimit: strings.TrimSpace(r.PostFormValue("rate_limit_per_minute")),
		allowlist: r.PostFormValue("ip_allowlist"),
	}
	if f.rateLimit != "" {
		n, err := strconv.Atoi(f.rateLimit)
		if err != nil {
			f.errs.Add("/rate_limit_per_minute", fmt.Sprintf("must be a whole number from %d to %d", apikey.MinRateLimit, apikey.MaxRateLimit))
		} else {
			f.input.RateLimitPerMinute = &n
		}
	}
	for i, line := range strings.Split(f.allowlist, "\n") {
		if entry := strings.TrimSpace(line); entry != "" {
			f.input.IPAllowlist = append(f.input.IPAllowlist, entry)
			f.lines = append(f.lines, i+1)
		}
	}
	return f
}

// errorsOf merges the form's own errors with apikey's, nil when none.
func errorsOf(own validate.Errors, err error) error {
	all := slices.Clone(own)
	var verrs validate.Errors
	if errors.As(err, &verrs) {
		all = append(all, verrs...)
	} else if err != nil {
		return err
	}
	return all.Err()
}

func (u *UI) apiKeyFormFailed(w http.ResponseWriter, r *http.Request, f keyForm, err error) {
	errs, ok := fieldErrors(err)
	if !ok {
		u.serverError(w, r, err)
		return
	}
	view := u.apiKeyFormView(w, r, f)
	for pointer, msg := range errs {
		idx, isEntry := strings.CutPrefix(pointer, "/ip_allowlist/")
		if !isEntry {
			view.Errors[pointer] = msg
			continue
		}
		i, err := strconv.Atoi(idx)
		if err != nil || i < 0 || i >= len(f.lines) {
			view.Errors["/ip_allowlist"] = msg
			continue
		}
		view.AllowlistErrors = append(view.AllowlistErrors, fmt.Sprintf("Line %d: %s", f.lines[i], msg))
	}
	slices.SortFunc(view.AllowlistErrors, compareLines)
	Render(w, r, http.StatusUnprocessableEntity, APIKeyNewPage(view))
}

// apiKeyFormView shows the posted form again, without messages.
func (u *UI) apiKeyFormView(w http.ResponseWriter, r *http.Request, f keyForm) APIKeyFormView {
	return APIKeyFormView{
		Nav: u.nav(w, r, sectionAPIKeys), Name: f.input.Name, Scopes: scopeOptions(r, f.input.Scopes), Withheld: withheldScopes(r),
		RateLimit: f.rateLimit, Allowlist: f.allowlist, Errors: FieldErrors{},
	}
}

// compareLines orders "Line N: …" messages by N.
func compareLines(a, b string) int {
	num := func(s string) int {
		n, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(s, ":", 2)[0], "Line "))
		return n
	}
	return num(a) - num(b)
}

// defaultKeyScopes are ticked on the empty create form: reading links and
// their analytics, what most integrations start with; writing is a
// deliberate choice.
var defaultKeyScopes = []string{string(scope.LinksRead), string(scope.AnalyticsRead)}

// scopeOptions lists, in display order, the scopes the viewer's role in
// the workspace allows (a member is not offered what only admins may do;
// the service refuses it if posted all the same), checked when chosen.
func scopeOptions(r *http.Request, chosen []string) []ScopeOption {
	ws, _ := workspaceFrom(r.Context())
	allowed := ws.Role.Allowed()
	out := make([]ScopeOption, len(allowed))
	for i, s := range allowed {
		out[i] = ScopeOption{Name: string(s), Description: scope.Describe(s), Checked: slices.Contains(chosen, string(s))}
	}
	return out
}

// withheldScopes names the scopes the viewer's role does not allow, for
// the form's note ("" for admins).
func withheldScopes(r *http.Request) string {
	ws, _ := workspaceFrom(r.Context())
	var out []string
	for _, s := range scope.All {
		if !ws.Can(s) {
			out = append(out, string(s))
		}
	}
	return strings.Join(out, ", ")
}
