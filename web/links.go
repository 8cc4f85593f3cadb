package web

import "net/http"

// links is the workspace's links page. TODO(lead): replace the placeholder
// (LinksPage in links.templ) with the links list.
func (u *UI) links(w http.ResponseWriter, r *http.Request) {
	Render(w, r, http.StatusOK, LinksPage(LinksView{Nav: u.nav(w, r, sectionLinks)}))
}
