package api

import (
	"context"
	"encoding/json"
	"errors"
	"image/color"
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/budget"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/qrdesign"
	"github.com/linkqr/linkqr/internal/validate"
)

// MaxDesignBodyBytes bounds a QR design's PUT body: a 256 KiB logo in
// base64 is 342 KiB, plus the other fields (docs/api.md#qr-designs).
const MaxDesignBodyBytes = 384 << 10

// designLink loads the {id} link of the caller's workspace, rejecting any
// query: another workspace's link is a 404 like an unknown one.
func (a *API) designLink(r *http.Request) (link.Link, error) {
	linkID, err := bareID(r, id.Link)
	if err != nil {
		return link.Link{}, err
	}
	return a.Links.Get(r.Context(), auth.FromContext(r.Context()).WorkspaceID, linkID)
}

// getLinkQRDesign answers GET /api/v1/links/{id}/qr/design: the link's
// own design, else the one it inherits (link_id null).
func (a *API) getLinkQRDesign(w http.ResponseWriter, r *http.Request) error {
	l, err := a.designLink(r)
	if err != nil {
		return err
	}
	d, err := a.Designs.ForLink(r.Context(), l.WorkspaceID, l)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, d.Wire())
}

// putLinkQRDesign answers PUT /api/v1/links/{id}/qr/design.
func (a *API) putLinkQRDesign(w http.ResponseWriter, r *http.Request) error {
	l, err := a.designLink(r)
	if err != nil {
		return err
	}
	u, release, err := decodeDesignBody(w, r, l.WorkspaceID)
	defer release()
	if err != nil {
		return err
	}
	d, err := a.Designs.PutLink(r.Context(), l.WorkspaceID, l, u)
	if err != nil {
		return designError(err)
	}
	return writeJSON(w, http.StatusOK, d.Wire())
}

// deleteLinkQRDesign answers DELETE /api/v1/links/{id}/qr/design.
func (a *API) deleteLinkQRDesign(w http.ResponseWriter, r *http.Request) error {
	l, err := a.designLink(r)
	if err != nil {
		return err
	}
	if err := a.Designs.DeleteLink(r.Context(), l.WorkspaceID, l); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// getQRDesign answers GET /api/v1/qr/design: the workspace default.
func (a *API) getQRDesign(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	d, err := a.Designs.Default(r.Context(), auth.FromContext(r.Context()).WorkspaceID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, d.Wire())
}

// putQRDesign answers PUT /api/v1/qr/design.
func (a *API) putQRDesign(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	ws := auth.FromContext(r.Context()).WorkspaceID
	u, release, err := decodeDesignBody(w, r, ws)
	defer release()
	if err != nil {
		return err
	}
	d, err := a.Designs.PutDefault(r.Context(), auth.FromContext(r.Context()).WorkspaceID, u)
	if err != nil {
		return designError(err)
	}
	return writeJSON(w, http.StatusOK, d.Wire())
}

// designError maps a save's refusal: an unreadable design is its own
// problem type; everything else is writeError's.
func designError(err error) error {
	if errors.Is(err, qrdesign.ErrUnreadable) {
		return problem.New(problem.QRUnreadable, "rendered at 512 px, this design does not decode to the code's text with a QR decoder; nothing was saved")
	}
	return err
}

// decodeDesignBody parses a design's PUT body; a logo's decode is
// admitted by the workspace's Logo budget first (internal/budget), and
// release, to be called when the request ends, gives it back.
func decodeDesignBody(w http.ResponseWriter, r *http.Request, ws uuid.UUID) (u qrdesign.Update, release func(), err error) {
	var releases []func()
	release = func() {
		for _, rel := range releases {
			rel()
		}
	}
	f, err := decodeObjectUpTo(w, r, MaxDesignBodyBytes)
	if err != nil {
		return qrdesign.Update{}, release, err
	}
	admit := func(cost int64) error {
		rel, err := budget.Admit(r.Context(), budget.Logo, ws, cost)
		if err == nil {
			releases = append(releases, rel)
		}
		return err
	}
	u, err = decodeDesign(f, admit)
	return u, release, err
}

// decodeDesign parses a design's PUT body; absent members stay unset,
// logo and frame may be null (removed). A logo's decode is admitted by
// admit (nil: always); its refusal is returned as it is.
func decodeDesign(f *fields, admit qr.Admit) (qrdesign.Update, error) {
	f.rejectUnknown("fg", "bg", "ecc", "margin", "modules", "logo", "frame")
	u := qrdesign.Update{
		FG:      parseOptional(f, "fg", f.str("fg", false), qr.ParseColour),
		BG:      parseOptional(f, "bg", f.str("bg", false), qr.ParseColour),
		ECC:     parseOptional(f, "ecc", f.str("ecc", false), parseECC),
		Modules: parseOptional(f, "modules", f.str("modules", false), qr.ParseModuleStyle),
		Margin:  f.intIn("margin", qr.MinMargin, qr.MaxMargin),
	}
	if logo := f.nullableStr("logo"); logo.Set {
		u.Logo = link.Some[*qr.Logo](nil)
		if logo.Value != nil {
			l, err := qr.ParseLogoDataURIAdmitted(*logo.Value, admit)
			if overBudget(err) {
				return qrdesign.Update{}, err
			}
			if f.errs.Check("/logo", err) {
				u.Logo = link.Some(l)
			} else {
				u.Logo = link.Optional[*qr.Logo]{}
			}
		}
	}
	u.Frame = f.frame("frame")
	return u, f.errs.Err()
}

func parseECC(s string) (qr.ECC, error) {
	switch e := qr.ECC(s); e {
	case qr.ECCLow, qr.ECCMedium, qr.ECCQuartile, qr.ECCHigh:
		return e, nil
	}
	return "", validate.Reject("must be one of L, M, Q, H")
}

// intIn decodes an integer member within [lo, hi].
func (f *fields) intIn(name string, lo, hi int) link.Optional[int] {
	if !f.has(name) {
		return link.Optional[int]{}
	}
	var n json.Number
	if f.isNull(name) || json.Unmarshal(f.m[name], &n) != nil {
		f.errs.Add(pointer(name), "must be an integer")
		return link.Optional[int]{}
	}
	v, err := n.Int64()
	if err != nil || v < int64(lo) || v > int64(hi) {
		f.errs.Add(pointer(name), "must be an integer from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi))
		return link.Optional[int]{}
	}
	return link.Some(int(v))
}

// frame decodes the frame member: null, or {text, color?}.
func (f *fields) frame(name string) link.Optional[*qrdesign.FrameInput] {
	if !f.has(name) {
		return link.Optional[*qrdesign.FrameInput]{}
	}
	if f.isNull(name) {
		return link.Some[*qrdesign.FrameInput](nil)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(f.m[name], &m) != nil || m == nil {
		f.errs.Add(pointer(name), "must be an object {\"text\": …, \"color\": …} or null")
		return link.Optional[*qrdesign.FrameInput]{}
	}
	sub := &fields{m: m}
	sub.rejectUnknown("text", "color")
	text := parseOptional(sub, "text", sub.str("text", true), qr.ParseFrameText)
	col := parseOptional(sub, "color", sub.str("color", false), qr.ParseColour)
	for _, e := range sub.errs {
		f.errs.Add(pointer(name)+e.Pointer, e.Detail)
	}
	if len(sub.errs) > 0 {
		return link.Optional[*qrdesign.FrameInput]{}
	}
	in := &qrdesign.FrameInput{Text: text.Value}
	if col.Set {
		c := color.RGBA(col.Value)
		in.Color = &c
	}
	return link.Some(in)
}

// overBudget reports whether err is a budget's refusal (or the caller going
// away while it waited), which is the request's answer, not a field's.
func overBudget(err error) bool {
	var r *budget.Refused
	return errors.As(err, &r) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
