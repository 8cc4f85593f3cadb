package api

import (
	"net/http"

	"github.com/linkqr/linkqr/internal/auth"
	"github.com/linkqr/linkqr/internal/cursor"
	"github.com/linkqr/linkqr/internal/link"
)

// tagJSON is the tag object of GET /api/v1/tags (the TagObject schema of
// internal/api/openapi.yaml; docs/api.md#tags).
type tagJSON struct {
	Object    string `json:"object"`
	Name      string `json:"name"`
	LinkCount int64  `json:"link_count"`
}

// listTags answers GET /api/v1/tags: the workspace's tags by name, with
// how many live links carry each.
func (a *API) listTags(w http.ResponseWriter, r *http.Request) error {
	pg, err := parsePageOf(r, cursor.DecodeName)
	if err != nil {
		return err
	}
	after := ""
	if pg.before != nil {
		after = *pg.before
	}
	tags, hasMore, err := a.Links.ListTags(r.Context(), auth.FromContext(r.Context()).WorkspaceID, after, pg.limit)
	if err != nil {
		return err
	}
	present := func(t link.TagCount) tagJSON { return tagJSON{Object: "tag", Name: t.Name, LinkCount: t.LinkCount} }
	return writeJSON(w, http.StatusOK, newListAfter(tags, hasMore, present, func(t link.TagCount) string { return cursor.EncodeName(t.Name) }))
}
