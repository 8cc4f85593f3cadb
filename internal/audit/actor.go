// Package audit keeps the workspace's audit log: who changed who may do
// what, or where the workspace's data goes. Every entry is written in the
// transaction of the change it records, so there is no entry without its
// change and no change without its entry (docs/api.md#audit-log).
package audit

import (
	"context"
	"net/netip"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/id"
)

// ActorType says what kind of credential acted.
type ActorType string

// The actor types of an audit entry.
const (
	ActorUser        ActorType = "user"         // a signed-in browser session
	ActorAPIKey      ActorType = "api_key"      // an API key (its owner in UserID, nil for operator keys)
	ActorOAuthClient ActorType = "oauth_client" // an OAuth access token (the granting user in UserID)
	ActorOperator    ActorType = "operator"     // a `linkqr admin` command
	ActorSystem      ActorType = "system"       // a background job of linkqr itself
)

// Actor is who makes a change. The edges put it in the request's context
// (the API's authentication, the UI's session, the operator commands);
// a context without one acts as the system.
type Actor struct {
	Type ActorType
	// ID is the credential's external id: "usr_…" for a session, "key_…",
	// "cli_…", empty for the operator and the system.
	ID string
	// UserID and Email are the person behind the credential, when there is one.
	UserID *uuid.UUID
	Email  string
	// IP and UserAgent describe the request, when there is one.
	IP        netip.Addr
	UserAgent string
}

type actorKey struct{}

// WithActor returns ctx carrying a.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor of ctx, or the system when none was set.
func ActorFrom(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok {
		return a
	}
	return Actor{Type: ActorSystem}
}

// OnBehalfOf returns ctx acting as the user userID when ctx has no actor
// of its own (the system): a change made for a person by a machine (a
// partner redeeming the code its user consented with) is that person's.
func OnBehalfOf(ctx context.Context, userID uuid.UUID) context.Context {
	if _, ok := ctx.Value(actorKey{}).(Actor); ok {
		return ctx
	}
	return WithActor(ctx, Actor{Type: ActorUser, ID: id.Format(id.User, userID), UserID: &userID})
}

// Label names the actor for people: the e-mail address of the person
// behind it when known, else the credential ("API key key_…", "OAuth app
// cli_…"), "operator" or "linkqr" (the system).
func (a Actor) Label() string {
	switch {
	case a.Email != "":
		return a.Email
	case a.Type == ActorAPIKey && a.ID != "":
		return "API key " + a.ID
	case a.Type == ActorOAuthClient && a.ID != "":
		return "OAuth app " + a.ID
	case a.Type == ActorUser && a.ID != "":
		return a.ID
	case a.Type == ActorOperator:
		return "operator"
	default:
		return "linkqr"
	}
}
