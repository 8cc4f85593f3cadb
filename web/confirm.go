package web

import (
	"net/http"
	"sort"
)

// confirmField is the field that marks a destructive post as confirmed:
// app.js adds it once the person accepted the confirm() dialog; without
// JavaScript the post arrives without it and gets a confirmation page
// (ConfirmPage) whose button posts again with it. So revoking or removing
// never happens on a single click, with or without JavaScript.
const confirmField = "confirmed"

// confirmFirst reports whether the post r was confirmed; when it was not,
// it has answered with a page asking for it, carrying the form's fields.
func (u *UI) confirmFirst(w http.ResponseWriter, r *http.Request, section string, c ConfirmView) bool {
	if r.PostFormValue(confirmField) == "yes" {
		return true
	}
	c.Nav = u.nav(w, r, section)
	c.Action = r.URL.Path
	names := make([]string, 0, len(r.PostForm))
	for name := range r.PostForm {
		if name != confirmField {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		for _, v := range r.PostForm[name] {
			c.Fields = append(c.Fields, HiddenField{Name: name, Value: v})
		}
	}
	Render(w, r, http.StatusOK, ConfirmPage(c))
	return false
}

// ConfirmView is a confirmation page for a destructive post.
type ConfirmView struct {
	Nav     NavModel
	Title   string // "Revoke this API key?"
	Message string
	Button  string // "Revoke key"
	Back    string // where "Cancel" leads
	Action  string
	Fields  []HiddenField
}
