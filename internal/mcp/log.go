package mcp

import (
	"context"
	"log/slog"
)

// quieter passes on only records at min or above. The stateless server
// connects and disconnects a session on every request and logs each at
// info; the request itself is already logged once by the app.
type quieter struct {
	slog.Handler
	min slog.Level
}

func (q quieter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= q.min && q.Handler.Enabled(ctx, l)
}

func (q quieter) WithAttrs(as []slog.Attr) slog.Handler {
	return quieter{q.Handler.WithAttrs(as), q.min}
}

func (q quieter) WithGroup(name string) slog.Handler {
	return quieter{q.Handler.WithGroup(name), q.min}
}
