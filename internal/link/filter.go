package link

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/validate"
)

// FilterParams are the query parameters of a list of links' filters: a
// search term, a state, a domain and a repeatable tag
// (docs/api.md#tags).
var FilterParams = []string{"q", "status", "domain", "tag"}

// Filter is a list of links' filters, parsed by ParseFilter: the one
// reading of them for the API's list, export and QR ZIP and for the Links
// page and its export.
type Filter struct {
	// Search holds the filters, to pass to Service.Search (paging unset).
	Search Search
	// Domain and Tags are the domain and tags filtered by, normalised, for
	// a page to show them ("" and nil when none).
	Domain string
	Tags   []string
	// Filtered reports whether any filter was given.
	Filtered bool
}

// ParseFilter reads the filters of q. An empty value is no filter (a
// form's "any" choice sends one); tags are normalised (ParseTag) and each
// counts once, at most MaxTagsPerLink of them. Each refusal is added to
// errs at pointer followed by the parameter ("/query" + "/tag").
func ParseFilter(q url.Values, pointer string, errs *validate.Errors) Filter {
	var f Filter
	term, err := ParseSearchTerm(q.Get("q"))
	errs.Check(pointer+"/q", err)
	state, err := ParseState(q.Get("status"))
	errs.Check(pointer+"/status", err)
	f.Search.Term, f.Search.State = term, state
	if d := strings.TrimSpace(q.Get("domain")); d != "" {
		h, err := hostname.Parse(d)
		if errs.Check(pointer+"/domain", err) {
			f.Search.Domain, f.Domain = &h, h.String()
		}
	}
	for _, raw := range q["tag"] {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		t, err := ParseTag(raw)
		if !errs.Check(pointer+"/tag", err) || slices.Contains(f.Search.Tags, t) {
			continue
		}
		if len(f.Search.Tags) == MaxTagsPerLink {
			errs.Add(pointer+"/tag", fmt.Sprintf("takes at most %d tags (a link has at most %d)", MaxTagsPerLink, MaxTagsPerLink))
			break
		}
		f.Search.Tags, f.Tags = append(f.Search.Tags, t), append(f.Tags, t.String())
	}
	f.Filtered = f.Search.Term.String() != "" || f.Search.State != StateAny || f.Search.Domain != nil || len(f.Search.Tags) > 0
	return f
}
