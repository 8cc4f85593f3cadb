package account

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/account/internal/accountdb"
	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/scope"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/tz"
	"github.com/linkqr/linkqr/internal/validate"
)

// Workspace is a workspace as one of its members sees it: with their role.
type Workspace struct {
	ID        uuid.UUID
	Name      string
	Role      Role
	CreatedAt time.Time
	// Timezone is the zone analytics cut days in when a request names
	// none (UTC unless an admin chose another).
	Timezone tz.Zone
}

// ExternalID is the workspace's "ws_…" identifier.
func (w Workspace) ExternalID() string { return id.Format(id.Workspace, w.ID) }

// IsAdmin reports whether the viewer administers the workspace.
func (w Workspace) IsAdmin() bool { return w.Can(scope.ManageWorkspace) }

// Can reports whether the viewer's role in the workspace allows s: the
// role table of internal/scope, as the API and MCP ask it.
func (w Workspace) Can(s scope.Scope) bool { return w.Role.Permits(s) }

// Workspace loads a workspace through userID's membership: a workspace the
// user does not belong to is id.ErrNotFound, exactly like one that does
// not exist, so guessing ids reveals nothing.
func (s *Service) Workspace(ctx context.Context, userID, workspaceID uuid.UUID) (Workspace, error) {
	row, err := accountdb.New().WorkspaceGetForUser(ctx, s.db.Conn(ctx), accountdb.WorkspaceGetForUserParams{ID: workspaceID, UserID: userID})
	if err != nil {
		return Workspace{}, store.InterpretError(err)
	}
	return Workspace{ID: row.ID, Name: row.Name, Role: Role(row.Role), CreatedAt: row.CreatedAt, Timezone: zoneOf(row.Timezone)}, nil
}

// WorkspaceByID loads a workspace for a caller already bound to it (an API
// credential, an operator); Role is empty.
func (s *Service) WorkspaceByID(ctx context.Context, id uuid.UUID) (Workspace, error) {
	row, err := accountdb.New().WorkspaceGetByID(ctx, s.db.Conn(ctx), id)
	if err != nil {
		return Workspace{}, store.InterpretError(err)
	}
	return Workspace{ID: row.ID, Name: row.Name, CreatedAt: row.CreatedAt, Timezone: zoneOf(row.Timezone)}, nil
}

// zoneOf is a stored zone name as a zone; a name the zone database no
// longer holds (only SetTimezone writes it, after parsing) reads as UTC.
func zoneOf(name string) tz.Zone {
	z, err := tz.Parse(name)
	if err != nil {
		return tz.UTC
	}
	return z
}

// SetTimezone makes zone the workspace's analytics zone (an admin's
// change: the routes ask for it, members:write in the API and
// workspace:manage in the UI, both an admin's only). A change is audited.
func (s *Service) SetTimezone(ctx context.Context, workspaceID uuid.UUID, zone tz.Zone) error {
	return s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := accountdb.New()
		old, err := q.WorkspaceGetByID(ctx, tx, workspaceID)
		if err != nil {
			return store.InterpretError(err)
		}
		if old.Timezone == zone.Name() {
			return nil
		}
		if _, err := q.WorkspaceSetTimezone(ctx, tx, accountdb.WorkspaceSetTimezoneParams{ID: workspaceID, Timezone: zone.Name()}); err != nil {
			return store.InterpretError(err)
		}
		return audit.Record(ctx, tx, workspaceID, audit.WorkspaceTimezoneChanged, audit.TargetOf("workspace", id.Workspace, workspaceID), audit.Changes{
			"timezone": audit.Change(old.Timezone, zone.Name()),
		})
	})
}

// Workspaces lists the user's workspaces by name.
func (s *Service) Workspaces(ctx context.Context, userID uuid.UUID) ([]Workspace, error) {
	rows, err := accountdb.New().WorkspaceListForUser(ctx, s.db.Conn(ctx), userID)
	if err != nil {
		return nil, store.InterpretError(err)
	}
	out := make([]Workspace, len(rows))
	for i, r := range rows {
		out[i] = Workspace{ID: r.ID, Name: r.Name, Role: Role(r.Role), CreatedAt: r.CreatedAt, Timezone: zoneOf(r.Timezone)}
	}
	return out, nil
}

// NewWorkspace creates another workspace with userID as its admin. A bad
// name is a validate.Errors with the pointer /name.
func (s *Service) NewWorkspace(ctx context.Context, userID uuid.UUID, name string) (Workspace, error) {
	var errs validate.Errors
	name = NormalizeWorkspaceName("/name", name, &errs)
	if err := errs.Err(); err != nil {
		return Workspace{}, err
	}
	var ws Workspace
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		id, err := createWorkspace(ctx, accountdb.New(), tx, userID, name)
		ws = Workspace{ID: id, Name: name, Role: RoleAdmin}
		return err
	})
	return ws, err
}
