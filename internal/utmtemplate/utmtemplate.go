// Package utmtemplate keeps a workspace's UTM templates (docs/ui.md#utm-templates):
// named sets of the five UTM parameters that fill the link forms, so a
// team tags its campaigns the same way every time. A template is only a
// convenience of the forms: links keep their own copy of the values, and
// changing or deleting a template changes no link. Every change is an
// audit entry in its own transaction, like the workspace's other settings.
package utmtemplate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/audit"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/text"
	"github.com/linkqr/linkqr/internal/utmtemplate/internal/utmtemplatedb"
	"github.com/linkqr/linkqr/internal/validate"
)

// MaxPerWorkspace is how many templates a workspace keeps: a select of
// more is no longer a quick choice.
const MaxPerWorkspace = 50

// NameRule is a template's name: 1 to 60 characters, trimmed.
var NameRule = text.Rule{Min: 1, Max: 60, Trim: true}

// ErrLimit refuses a template beyond MaxPerWorkspace.
var ErrLimit = fmt.Errorf("a workspace can have at most %d UTM templates; delete one first", MaxPerWorkspace)

// ErrNameTaken refuses a name another template of the workspace has (in
// any letter case).
var ErrNameTaken = errors.New("another UTM template of this workspace has this name")

// nameConstraint is the unique index on (workspace, lower(name)).
const nameConstraint = "utm_templates_name_key"

// Template is one named set of UTM parameters.
type Template struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	Name        text.Text
	UTM         link.UTM
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Input is a parsed template: a name and at least one parameter.
type Input struct {
	Name text.Text
	UTM  link.UTM
}

// ParseInput parses a template's fields as a form or any other edge got
// them: the name (NameRule) and the five values in link.UTMParams order
// (link.ParseUTMValue each). Refusals are validate.Errors under "/name"
// and "/utm_source" …; a template without any parameter is refused at
// "/utm_source".
func ParseInput(name string, values [5]string) (Input, error) {
	var (
		in   Input
		errs validate.Errors
	)
	n, err := NameRule.Parse(name)
	if errs.Check("/name", err) {
		in.Name = n
	}
	for i, p := range link.UTMParams {
		v, err := link.ParseUTMValue(values[i])
		if errs.Check("/"+p.Name(), err) {
			in.UTM = in.UTM.With(p, v)
		}
	}
	if len(errs) == 0 && in.UTM.IsZero() {
		errs.Add("/"+link.UTMSource.Name(), "must be filled in, or another parameter must: a template fills at least one")
	}
	return in, errs.Err()
}

// Service reads and changes templates.
type Service struct{ db *store.DB }

// NewService returns a Service over db.
func NewService(db *store.DB) *Service { return &Service{db: db} }

// List returns the workspace's templates by name.
func (s *Service) List(ctx context.Context, ws uuid.UUID) ([]Template, error) {
	rows, err := utmtemplatedb.New().UTMTemplateListByWorkspace(ctx, s.db.Conn(ctx), ws)
	if err != nil {
		return nil, store.InterpretError(err)
	}
	out := make([]Template, len(rows))
	for i, r := range rows {
		out[i] = fromRow(r)
	}
	return out, nil
}

// Get returns one template of the workspace, or id.ErrNotFound (also for
// another workspace's).
func (s *Service) Get(ctx context.Context, ws, templateID uuid.UUID) (Template, error) {
	row, err := utmtemplatedb.New().UTMTemplateGetByID(ctx, s.db.Conn(ctx), utmtemplatedb.UTMTemplateGetByIDParams{ID: templateID, WorkspaceID: ws})
	if err != nil {
		return Template{}, store.InterpretError(err)
	}
	return fromRow(row), nil
}

// Create adds a template (ErrLimit, ErrNameTaken) with its
// utm_template.created entry.
func (s *Service) Create(ctx context.Context, ws uuid.UUID, in Input) (Template, error) {
	var res Template
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := utmtemplatedb.New()
		if err := q.UTMTemplateLockWorkspace(ctx, tx, ws); err != nil {
			return store.InterpretError(err)
		}
		n, err := q.UTMTemplateCountByWorkspace(ctx, tx, ws)
		if err != nil {
			return store.InterpretError(err)
		}
		if n >= MaxPerWorkspace {
			return ErrLimit
		}
		row, err := q.UTMTemplateCreate(ctx, tx, utmtemplatedb.UTMTemplateCreateParams{
			ID: id.New(), WorkspaceID: ws, Name: in.Name.String(),
			UTMSource: in.UTM.Ptr(link.UTMSource), UTMMedium: in.UTM.Ptr(link.UTMMedium), UTMCampaign: in.UTM.Ptr(link.UTMCampaign),
			UTMTerm: in.UTM.Ptr(link.UTMTerm), UTMContent: in.UTM.Ptr(link.UTMContent),
		})
		if err != nil {
			return nameTaken(store.InterpretError(err))
		}
		res = fromRow(row)
		return audit.Record(ctx, tx, ws, audit.UTMTemplateCreated, target(res.ID), changes(Template{}, res))
	})
	return res, err
}

// Update replaces a template's name and parameters (ErrNameTaken,
// id.ErrNotFound); a change writes utm_template.updated with the fields
// that changed, a save that changes nothing writes nothing.
func (s *Service) Update(ctx context.Context, ws, templateID uuid.UUID, in Input) (Template, error) {
	var res Template
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := utmtemplatedb.New()
		oldRow, err := q.UTMTemplateGetForUpdate(ctx, tx, utmtemplatedb.UTMTemplateGetForUpdateParams{ID: templateID, WorkspaceID: ws})
		if err != nil {
			return store.InterpretError(err)
		}
		old := fromRow(oldRow)
		if old.Name == in.Name && old.UTM == in.UTM {
			res = old
			return nil
		}
		row, err := q.UTMTemplateUpdate(ctx, tx, utmtemplatedb.UTMTemplateUpdateParams{
			ID: templateID, WorkspaceID: ws, Name: in.Name.String(),
			UTMSource: in.UTM.Ptr(link.UTMSource), UTMMedium: in.UTM.Ptr(link.UTMMedium), UTMCampaign: in.UTM.Ptr(link.UTMCampaign),
			UTMTerm: in.UTM.Ptr(link.UTMTerm), UTMContent: in.UTM.Ptr(link.UTMContent),
		})
		if err != nil {
			return nameTaken(store.InterpretError(err))
		}
		res = fromRow(row)
		return audit.Record(ctx, tx, ws, audit.UTMTemplateUpdated, target(res.ID), changes(old, res))
	})
	return res, err
}

// Delete removes a template (id.ErrNotFound) with its
// utm_template.deleted entry; links filled from it keep their values.
func (s *Service) Delete(ctx context.Context, ws, templateID uuid.UUID) (Template, error) {
	var res Template
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		row, err := utmtemplatedb.New().UTMTemplateDelete(ctx, tx, utmtemplatedb.UTMTemplateDeleteParams{ID: templateID, WorkspaceID: ws})
		if err != nil {
			return store.InterpretError(err)
		}
		res = fromRow(row)
		return audit.Record(ctx, tx, ws, audit.UTMTemplateDeleted, target(res.ID), changes(res, Template{}))
	})
	return res, err
}

func target(templateID uuid.UUID) audit.Target {
	return audit.TargetOf("utm_template", id.UTMTemplate, templateID)
}

// changes are the audit entry's fields that differ between old and new
// (the zero Template: none): the name and each parameter, null when absent.
func changes(old, new Template) audit.Changes {
	c := audit.Changes{}
	if old.Name != new.Name {
		c["name"] = audit.Change(nullable(old.Name.String()), nullable(new.Name.String()))
	}
	for _, p := range link.UTMParams {
		if old.UTM.Get(p) != new.UTM.Get(p) {
			c[p.Name()] = audit.Change(nullable(old.UTM.Get(p)), nullable(new.UTM.Get(p)))
		}
	}
	return c
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nameTaken(err error) error {
	if id.IsConflict(err, nameConstraint) {
		return ErrNameTaken
	}
	return err
}

// fromRow reads a stored template (trusted: written from parsed values).
func fromRow(r utmtemplatedb.UtmTemplate) Template {
	return Template{
		ID: r.ID, WorkspaceID: r.WorkspaceID, Name: text.Stored(r.Name),
		UTM:       link.StoredUTM(r.UTMSource, r.UTMMedium, r.UTMCampaign, r.UTMTerm, r.UTMContent),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}
