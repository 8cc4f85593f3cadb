package link

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/link/internal/linkdb"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/text"
	"github.com/linkqr/linkqr/internal/validate"
)

// State filters a search by what a link does now. The zero State is every
// link.
type State string

// The states a search can filter by.
const (
	StateAny     State = ""
	StateActive  State = "active"  // redirects now: active and not expired
	StatePaused  State = "paused"  // paused by its owner
	StateExpired State = "expired" // its expiry has passed
)

// MaxSearchChars bounds a search term.
const MaxSearchChars = 200

// ParseState accepts a state filter; "" and "all" are every link.
func ParseState(s string) (State, error) {
	switch st := State(s); st {
	case StateAny, StateActive, StatePaused, StateExpired:
		return st, nil
	case "all":
		return StateAny, nil
	}
	return "", validate.Reject("must be one of all, active, paused, expired")
}

// SearchTerm is what a person typed into the search box, trimmed: at most
// 200 characters of text.
type SearchTerm struct{ s string }

// searchRule is the search box's: at most 200 characters of text, trimmed.
var searchRule = text.Rule{Max: MaxSearchChars, Trim: true}

// ParseSearchTerm accepts a search term.
func ParseSearchTerm(s string) (SearchTerm, error) {
	t, err := searchRule.Parse(s)
	if err != nil {
		return SearchTerm{}, err
	}
	return SearchTerm{t.String()}, nil
}

// String is the term as typed.
func (t SearchTerm) String() string { return t.s }

// pattern is the ILIKE pattern finding the term anywhere, with the
// pattern's own metacharacters escaped (a typed "%" matches a "%").
func (t SearchTerm) pattern() *string {
	if t.s == "" {
		return nil
	}
	p := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(t.s) + "%"
	return &p
}

// Search is one page of a search: the links of the workspace whose title,
// code or target contains Term (case-insensitively), in State, on Domain, older than
// Before (nil: the newest), newest first.
type Search struct {
	Term   SearchTerm
	State  State
	Domain *hostname.Name // nil: every domain
	// IDs keeps only these links (nil: every link), for the QR ZIP's
	// repeatable id; ids of other workspaces simply match nothing.
	IDs []uuid.UUID
	// Tags keeps only the links that carry every one of them.
	Tags   []Tag
	Before *uuid.UUID
	Limit  int
	// NoTotal skips counting every match (the API's list has no total).
	NoTotal bool
}

// SearchResult is one page of links, whether more follow, and how many
// links match in all (0 with NoTotal).
type SearchResult struct {
	Links   []Link
	HasMore bool
	Total   int64
}

// Search finds a workspace's live links. The match runs on a trigram
// index (db/migrations/00014_link_search.sql), so it stays fast with tens of
// thousands of links.
func (s *Service) Search(ctx context.Context, ws uuid.UUID, q Search) (SearchResult, error) {
	var state *string
	if q.State != StateAny {
		st := string(q.State)
		state = &st
	}
	if len(q.Tags) > 0 {
		return s.searchTagged(ctx, ws, q, state)
	}
	db, queries, domain := s.db.Conn(ctx), linkdb.New(), domainPtr(q.Domain)
	rows, err := queries.LinkSearch(ctx, db, linkdb.LinkSearchParams{
		WorkspaceID: ws, Pattern: q.Term.pattern(), State: state, Domain: domain, Ids: q.IDs, Before: q.Before, Lim: int32(q.Limit + 1),
	})
	if err != nil {
		return SearchResult{}, store.InterpretError(err)
	}
	var total int64
	if !q.NoTotal {
		total, err = queries.LinkSearchCount(ctx, db, linkdb.LinkSearchCountParams{WorkspaceID: ws, Pattern: q.Term.pattern(), State: state, Domain: domain, Ids: q.IDs})
		if err != nil {
			return SearchResult{}, store.InterpretError(err)
		}
	}
	out, hasMore := store.Page(rows, q.Limit, s.fromRow)
	return SearchResult{Links: out, HasMore: hasMore, Total: total}, nil
}

// searchTagged is Search with tags: it walks the link_tags index of the
// first tag newest first and keeps the links that carry all of them.
func (s *Service) searchTagged(ctx context.Context, ws uuid.UUID, q Search, state *string) (SearchResult, error) {
	all := make([]string, len(q.Tags))
	for i, t := range q.Tags {
		all[i] = t.String()
	}
	db, queries, domain := s.db.Conn(ctx), linkdb.New(), domainPtr(q.Domain)
	rows, err := queries.LinkSearchTagged(ctx, db, linkdb.LinkSearchTaggedParams{
		WorkspaceID: ws, Tag: all[0], AllTags: all, Pattern: q.Term.pattern(), State: state, Domain: domain, Ids: q.IDs,
		Before: q.Before, Lim: int32(q.Limit + 1),
	})
	if err != nil {
		return SearchResult{}, store.InterpretError(err)
	}
	var total int64
	if !q.NoTotal {
		total, err = queries.LinkSearchTaggedCount(ctx, db, linkdb.LinkSearchTaggedCountParams{
			WorkspaceID: ws, Tag: all[0], AllTags: all, Pattern: q.Term.pattern(), State: state, Domain: domain, Ids: q.IDs,
		})
		if err != nil {
			return SearchResult{}, store.InterpretError(err)
		}
	}
	out, hasMore := store.Page(rows, q.Limit, s.fromRow)
	return SearchResult{Links: out, HasMore: hasMore, Total: total}, nil
}
