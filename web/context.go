package web

import (
	"context"

	"github.com/gorilla/sessions"

	"github.com/linkqr/linkqr/internal/account"
)

type ctxKey int

const (
	viewerKey ctxKey = iota
	workspaceKey
)

// viewer is the signed-in user of a request and their session.
type viewer struct {
	User    account.User
	Session *sessions.Session
}

func withViewer(ctx context.Context, v viewer) context.Context {
	return context.WithValue(ctx, viewerKey, v)
}

// viewerFrom returns the signed-in user; ok is false on public pages.
func viewerFrom(ctx context.Context) (viewer, bool) {
	v, ok := ctx.Value(viewerKey).(viewer)
	return v, ok
}

func withWorkspace(ctx context.Context, ws account.Workspace) context.Context {
	return context.WithValue(ctx, workspaceKey, ws)
}

// workspaceFrom returns the workspace of a /w/{ws}/… request, loaded
// through the viewer's membership.
func workspaceFrom(ctx context.Context) (account.Workspace, bool) {
	ws, ok := ctx.Value(workspaceKey).(account.Workspace)
	return ws, ok
}
