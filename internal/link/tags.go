package link

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/link/internal/linkdb"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/validate"
)

// Limits of tags (docs/api.md#tags).
const (
	MaxTagChars    = 50
	MaxTagsPerLink = 10
)

// Tag is one label of a link: 1-50 characters of letters, digits, "-",
// "_", "." and inner spaces, stored lowercase, so "Print" and "print " are
// one tag. Only ParseTag and stored links make one.
type Tag struct{ s string }

// ParseTag accepts a tag, trimmed of surrounding spaces and lowercased.
func ParseTag(raw string) (Tag, error) {
	if !utf8.ValidString(raw) {
		return Tag{}, validate.Reject("must be valid UTF-8")
	}
	s := strings.ToLower(strings.TrimSpace(raw))
	switch n := utf8.RuneCountInString(s); {
	case n == 0:
		return Tag{}, validate.Reject("must not be empty")
	case n > MaxTagChars:
		return Tag{}, validate.Reject(fmt.Sprintf("must be at most %d characters long", MaxTagChars))
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-_. ", r) {
			return Tag{}, validate.Reject(fmt.Sprintf("may contain only letters, digits, spaces, '-', '_' and '.' (not %q)", r))
		}
	}
	return Tag{s}, nil
}

// String is the tag as stored.
func (t Tag) String() string { return t.s }

// Tags is a link's set of tags: distinct, sorted, at most 10. Only
// ParseTags and stored links make one; the zero Tags is no tag.
type Tags struct{ list []string }

// ParseTags accepts a list of tags, each through ParseTag; duplicates
// after normalisation count once. Each refused tag is reported at its
// index under pointer (e.g. "/tags/2").
func ParseTags(raw []string, pointer string, errs *validate.Errors) Tags {
	seen := make([]string, 0, len(raw))
	for i, r := range raw {
		t, err := ParseTag(r)
		if errs.Check(fmt.Sprintf("%s/%d", pointer, i), err) && !slices.Contains(seen, t.s) {
			seen = append(seen, t.s)
		}
	}
	if len(seen) > MaxTagsPerLink {
		errs.Add(pointer, fmt.Sprintf("must hold at most %d distinct tags (got %d)", MaxTagsPerLink, len(seen)))
		return Tags{}
	}
	slices.Sort(seen)
	return Tags{seen}
}

// Strings are the tags, sorted; never nil (an empty set is an empty list,
// as the API shows it).
func (t Tags) Strings() []string {
	if t.list == nil {
		return []string{}
	}
	return t.list
}

// Len is how many tags there are.
func (t Tags) Len() int { return len(t.list) }

// storedTags is a row's tags; they were normalised when written.
func storedTags(s []string) Tags { return Tags{s} }

// TagCount is a tag and how many live links carry it.
type TagCount struct {
	Name      string
	LinkCount int64
}

// ListTags returns up to limit of a workspace's tags after the name after
// ("": from the first), by name, and whether more follow.
func (s *Service) ListTags(ctx context.Context, ws uuid.UUID, after string, limit int) ([]TagCount, bool, error) {
	var a *string
	if after != "" {
		a = &after
	}
	rows, err := linkdb.New().TagList(ctx, s.db.Conn(ctx), linkdb.TagListParams{WorkspaceID: ws, After: a, Lim: int32(limit + 1)})
	if err != nil {
		return nil, false, store.InterpretError(err)
	}
	out, hasMore := store.Page(rows, limit, func(r linkdb.TagListRow) TagCount { return TagCount{Name: r.Tag, LinkCount: r.LinkCount} })
	return out, hasMore, nil
}
