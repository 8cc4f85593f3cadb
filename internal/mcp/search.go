package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// searchPageSize and searchMaxPages bound the API pages one multi-word
// search_links call reads (100 links a page).
const (
	searchPageSize = 100
	searchMaxPages = 10
)

// searchCursor continues a multi-word search: the API cursor of the page
// to read next ("" for the first) and how many of its links were already
// looked at.
type searchCursor struct {
	API  string `json:"c,omitempty"`
	Skip int    `json:"s,omitempty"`
}

const searchCursorPrefix = "w1."

func (c searchCursor) encode() string {
	b, _ := json.Marshal(c)
	return searchCursorPrefix + base64.RawURLEncoding.EncodeToString(b)
}

func decodeSearchCursor(s string) (searchCursor, error) {
	var c searchCursor
	if s == "" {
		return c, nil
	}
	raw, ok := strings.CutPrefix(s, searchCursorPrefix)
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if !ok || err != nil || json.Unmarshal(b, &c) != nil || c.Skip < 0 {
		return c, errors.New("cursor is not a next_cursor of search_links with this query")
	}
	return c, nil
}

// search answers search_links (tags, when given, go along as tag=…). One
// word, or none, is GET /links?q=word as it is.
// Several words must all appear (in any order) in the link's code, title
// or target URL: the API, which matches one substring, is asked for the
// longest word, and its pages are filtered by the others here, reading at
// most searchMaxPages pages per call; next_cursor continues where it
// stopped.
func (d *dispatcher) search(ctx context.Context, in searchIn) (*sdk.CallToolResult, any, error) {
	words := strings.Fields(strings.ToLower(in.Query))
	if len(words) <= 1 {
		q := url.Values{"limit": {"20"}, "tag": in.Tags}
		if in.Query != "" {
			q.Set("q", in.Query)
		}
		if in.Limit != nil {
			q.Set("limit", strconv.Itoa(*in.Limit))
		}
		if in.Status != "" {
			q.Set("status", in.Status)
		}
		if in.Cursor != "" {
			q.Set("cursor", in.Cursor)
		}
		return d.run(ctx, call{method: http.MethodGet, path: "/links", query: q})
	}
	limit := 20
	if in.Limit != nil {
		limit = *in.Limit
	}
	cur, err := decodeSearchCursor(in.Cursor)
	if err != nil {
		return failure(err), nil, nil
	}
	longest := words[0]
	for _, w := range words {
		if len(w) > len(longest) {
			longest = w
		}
	}
	found := []json.RawMessage{}
	for range searchMaxPages {
		page, resp, err := d.searchPage(ctx, longest, in.Tags, in.Status, cur.API)
		if err != nil {
			return failure(err), nil, nil
		}
		if resp != nil {
			return resp.problemResult(), nil, nil
		}
		for i := cur.Skip; i < len(page.Data); i++ {
			if !matchesAll(page.Data[i], words) {
				continue
			}
			found = append(found, page.Data[i])
			if len(found) == limit {
				next := searchCursor{API: cur.API, Skip: i + 1}
				more := i+1 < len(page.Data) || page.HasMore
				if i+1 == len(page.Data) && page.NextCursor != nil {
					next = searchCursor{API: *page.NextCursor}
				}
				return searchResult(found, more, next)
			}
		}
		if !page.HasMore || page.NextCursor == nil {
			return searchResult(found, false, searchCursor{})
		}
		cur = searchCursor{API: *page.NextCursor}
	}
	return searchResult(found, true, cur)
}

type linkPage struct {
	Data       []json.RawMessage `json:"data"`
	HasMore    bool              `json:"has_more"`
	NextCursor *string           `json:"next_cursor"`
}

// searchPage reads one API page of links containing word; a non-2xx
// answer comes back as the response, to become the tool's error.
func (d *dispatcher) searchPage(ctx context.Context, word string, tags []string, status, cursor string) (linkPage, *response, error) {
	q := url.Values{"q": {word}, "limit": {strconv.Itoa(searchPageSize)}, "tag": tags}
	if status != "" {
		q.Set("status", status)
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	resp, err := d.do(ctx, call{method: http.MethodGet, path: "/links", query: q})
	if err != nil {
		return linkPage{}, nil, err
	}
	if resp.status != http.StatusOK {
		return linkPage{}, resp, nil
	}
	var page linkPage
	if err := json.Unmarshal(resp.body, &page); err != nil {
		return linkPage{}, nil, err
	}
	return page, nil, nil
}

// matchesAll reports whether every word occurs in the link's title, code
// or target URL (the fields GET /links?q= searches), case-insensitively.
func matchesAll(raw json.RawMessage, words []string) bool {
	var l struct {
		Title     *string `json:"title"`
		Code      string  `json:"code"`
		TargetURL string  `json:"target_url"`
	}
	if json.Unmarshal(raw, &l) != nil {
		return false
	}
	title := ""
	if l.Title != nil {
		title = *l.Title
	}
	hay := strings.ToLower(title + " " + l.Code + " " + l.TargetURL)
	for _, w := range words {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

func searchResult(found []json.RawMessage, more bool, next searchCursor) (*sdk.CallToolResult, any, error) {
	var nextCursor *string
	if more {
		s := next.encode()
		nextCursor = &s
	}
	body, err := json.Marshal(map[string]any{"object": "list", "data": found, "has_more": more, "next_cursor": nextCursor})
	if err != nil {
		return failure(err), nil, nil
	}
	return (&response{status: http.StatusOK, header: http.Header{"Content-Type": {"application/json"}}, body: body}).result(), nil, nil
}
