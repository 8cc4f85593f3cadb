package store

// Page converts the rows of a "LIMIT limit+1" query into one page of
// results: at most limit items, and whether more follow. Fetching one extra
// row answers has_more without a count query.
func Page[R, T any](rows []R, limit int, convert func(R) T) ([]T, bool) {
	hasMore := len(rows) > limit
	if hasMore {
		rows = rows[:limit]
	}
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = convert(r)
	}
	return out, hasMore
}
