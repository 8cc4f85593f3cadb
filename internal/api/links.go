package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/validate"
)

// pathID parses the {id} URL parameter as an ID of prefix; a malformed
// id, or another type's, is simply not found.
func pathID(r *http.Request, prefix id.Prefix) (uuid.UUID, error) {
	obj, ok := id.Parse(prefix, chi.URLParam(r, "id"))
	if !ok {
		return uuid.UUID{}, id.ErrNotFound
	}
	return obj, nil
}

// bareID is pathID for endpoints that take no query parameters.
func bareID(r *http.Request, prefix id.Prefix) (uuid.UUID, error) {
	objID, err := pathID(r, prefix)
	if err != nil {
		return objID, err
	}
	return objID, noQuery(r)
}

// noQuery rejects query parameters on endpoints that take none.
func noQuery(r *http.Request) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	var errs validate.Errors
	checkKnownParams(q, &errs)
	return errs.Err()
}

// createLink answers POST /api/v1/links.
func (a *API) createLink(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	f, err := decodeObject(w, r)
	if err != nil {
		return err
	}
	in, err := decodeCreate(f, time.Now())
	if err != nil {
		return err
	}
	l, err := a.Links.Create(r.Context(), auth.FromContext(r.Context()).WorkspaceID, in)
	switch {
	case errors.Is(err, link.ErrCodeTaken) && in.Domain != nil:
		return problem.New(problem.Conflict, fmt.Sprintf("code %q is already taken on %s (codes of deleted links are never reused)", in.Code, in.Domain))
	case errors.Is(err, link.ErrCodeTaken):
		return problem.New(problem.Conflict, fmt.Sprintf("code %q is already taken (codes of deleted links are never reused)", in.Code))
	case errors.Is(err, link.ErrDomainUnusable):
		var errs validate.Errors
		errs.Add("/domain", err.Error())
		return errs.Err()
	}
	if err != nil {
		return err
	}
	res := l.Wire()
	w.Header().Set("Location", a.BaseURL+"/api/v1/links/"+res.ID)
	return writeJSON(w, http.StatusCreated, res)
}

// decodeCreate parses a create body into the domain's typed input. Nullable
// exactly as the document says: title, expires_at and domain may be null,
// code and target_url may not. A code is checked against the reserved
// paths only on the default domain, so domain is parsed first.
func decodeCreate(f *fields, now time.Time) (link.CreateInput, error) {
	f.rejectUnknown(append([]string{"target_url", "title", "code", "expires_at", "domain", "rules", "split", "password", "max_scans", "tags"},
		link.UTMNames()...)...)
	domain := f.nullableStr("domain")
	in := link.CreateInput{
		TargetURL: parseOptional(f, "target_url", f.str("target_url", true), link.ParseTargetURL).Value,
		Title:     parseNullable(f, "title", f.nullableStr("title"), link.ParseTitle).Value,
		Domain:    parseNullable(f, "domain", domain, hostname.Parse).Value,
		ExpiresAt: parseNullable(f, "expires_at", f.nullableTime("expires_at"), expiryAfter(now)).Value,
		Tags:      f.tags().Value,
		UTM:       f.utm().Apply(link.UTM{}),
	}
	onCustomDomain := domain.Value != nil // a malformed domain is reported alone
	in.Code = parseOptional(f, "code", f.str("code", false), func(s string) (link.Code, error) { return link.ParseCode(s, onCustomDomain) }).Value
	t := decodeTargeting(f)
	in.Rules, in.Split, in.Password, in.MaxScans = t.Rules.Value, t.Split.Value, t.Password.Value, t.MaxScans.Value
	return in, f.errs.Err()
}

// decodeTargeting parses rules, split, password and max_scans
// (docs/targeting.md), each nullable; absent ones stay unset.
func decodeTargeting(f *fields) link.UpdateInput {
	var in link.UpdateInput
	if v := f.nullableJSON("rules"); v.Set {
		in.Rules.Set = v.Value == nil
		if v.Value != nil {
			rules, ok := link.ParseRules(v.Value, f.ptr("rules"), &f.errs)
			in.Rules = link.Optional[[]link.Rule]{Set: ok, Value: rules}
		}
	}
	if v := f.nullableJSON("split"); v.Set {
		in.Split.Set = v.Value == nil
		if v.Value != nil {
			split, ok := link.ParseSplit(v.Value, f.ptr("split"), &f.errs)
			in.Split = link.Optional[[]link.Variant]{Set: ok, Value: split}
		}
	}
	in.Password = parseNullable(f, "password", f.nullableStr("password"), link.ParsePassword)
	in.MaxScans = parseNullable(f, "max_scans", f.nullableNumber("max_scans"), link.ParseMaxScans)
	return in
}

// decodeUpdate parses a PATCH body; absent members stay unset.
func decodeUpdate(f *fields, now time.Time) (link.UpdateInput, error) {
	f.rejectUnknown(append([]string{"target_url", "title", "status", "expires_at", "rules", "split", "password", "max_scans", "tags"},
		link.UTMNames()...)...)
	in := decodeTargeting(f)
	in.TargetURL = parseOptional(f, "target_url", f.str("target_url", false), link.ParseTargetURL)
	in.Title = parseNullable(f, "title", f.nullableStr("title"), link.ParseTitle)
	in.Status = parseOptional(f, "status", f.str("status", false), link.ParseStatus)
	in.ExpiresAt = parseNullable(f, "expires_at", f.nullableTime("expires_at"), expiryAfter(now))
	in.Tags = f.tags()
	in.UTM = f.utm()
	return in, f.errs.Err()
}

// utm decodes the five UTM members (docs/api.md#utm-parameters), each a
// string or null, through link.ParseUTMValue: the patch of those given,
// where null and a string that is empty once trimmed remove the parameter.
// A create applies it to no parameters at all.
func (f *fields) utm() link.UTMPatch {
	var p link.UTMPatch
	for _, param := range link.UTMParams {
		name := param.Name()
		o := parseNullable(f, name, f.nullableStr(name), link.ParseUTMValue)
		if !o.Set {
			continue
		}
		var v link.UTMValue
		if o.Value != nil {
			v = *o.Value
		}
		p.Set(param, v)
	}
	return p
}

// tags decodes the optional tags member into a link's tag set.
func (f *fields) tags() link.Optional[link.Tags] {
	list := f.strList("tags", false)
	if !list.Set {
		return link.Optional[link.Tags]{}
	}
	before := len(f.errs)
	tags := link.ParseTags(list.Value, f.ptr("tags"), &f.errs)
	if len(f.errs) > before {
		return link.Optional[link.Tags]{}
	}
	return link.Some(tags)
}

func expiryAfter(now time.Time) func(time.Time) (link.Expiry, error) {
	return func(t time.Time) (link.Expiry, error) { return link.ParseExpiry(t, now) }
}

// listLinks answers GET /api/v1/links, newest first, optionally filtered
// (link.ParseFilter).
func (a *API) listLinks(w http.ResponseWriter, r *http.Request) error {
	pg, err := parsePage(r, link.FilterParams...)
	if err != nil {
		return err
	}
	ws := auth.FromContext(r.Context()).WorkspaceID
	var errs validate.Errors
	filter := link.ParseFilter(r.URL.Query(), "/query", &errs)
	if err := errs.Err(); err != nil {
		return err
	}
	search := filter.Search
	var res link.SearchResult
	switch {
	case !filter.Filtered:
		res.Links, res.HasMore, err = a.Links.List(r.Context(), ws, pg.before, pg.limit)
	case search.Domain != nil && search.Term.String() == "" && search.State == link.StateAny && len(search.Tags) == 0:
		res.Links, res.HasMore, err = a.Links.ListOnDomain(r.Context(), ws, *search.Domain, pg.before, pg.limit)
	default:
		search.Before, search.Limit, search.NoTotal = pg.before, pg.limit, true
		res, err = a.Links.Search(r.Context(), ws, search)
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, newList(res.Links, res.HasMore, link.Link.Wire, func(l link.Link) uuid.UUID { return l.ID }))
}

// getLink answers GET /api/v1/links/{id}.
func (a *API) getLink(w http.ResponseWriter, r *http.Request) error {
	linkID, err := bareID(r, id.Link)
	if err != nil {
		return err
	}
	l, err := a.Links.Get(r.Context(), auth.FromContext(r.Context()).WorkspaceID, linkID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, l.Wire())
}

// updateLink answers PATCH /api/v1/links/{id}: re-point, retitle, pause or
// resume, change the expiry.
func (a *API) updateLink(w http.ResponseWriter, r *http.Request) error {
	linkID, err := bareID(r, id.Link)
	if err != nil {
		return err
	}
	f, err := decodeObject(w, r)
	if err != nil {
		return err
	}
	in, err := decodeUpdate(f, time.Now())
	if err != nil {
		return err
	}
	l, err := a.Links.Update(r.Context(), auth.FromContext(r.Context()).WorkspaceID, linkID, in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, l.Wire())
}

// deleteLink answers DELETE /api/v1/links/{id}.
func (a *API) deleteLink(w http.ResponseWriter, r *http.Request) error {
	linkID, err := bareID(r, id.Link)
	if err != nil {
		return err
	}
	if err := a.Links.Delete(r.Context(), auth.FromContext(r.Context()).WorkspaceID, linkID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
