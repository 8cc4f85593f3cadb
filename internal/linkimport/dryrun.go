package linkimport

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/linkcsv"
	"github.com/linkqr/linkqr/internal/linkimport/internal/linkimportdb"
	"github.com/linkqr/linkqr/internal/store"
)

// PlannedRow is a row's outcome in the dry run.
type PlannedRow struct {
	Number  int
	Outcome Outcome // Created: will be created
	Message string
}

// Plan is a dry run: every row's outcome, problems first then by row, and
// how many rows have each outcome. It creates nothing.
type Plan struct {
	Rows   []PlannedRow
	Counts map[Outcome]int
}

// DryRun parses an import's file again and tells, for every row, whether
// it would be created now: invalid cells, a code taken (by any link of the
// instance, a retired code, or an earlier row of the file) and a domain
// that is not a verified domain of the workspace.
func (s *Service) DryRun(ctx context.Context, ws uuid.UUID, imp Import) (Plan, error) {
	content, err := s.content(ctx, ws, imp.ID)
	if err != nil {
		return Plan{}, err
	}
	rows, err := linkcsv.Parse(content, linkcsv.ImportOptions{KeepCodes: imp.KeepCodes, Now: time.Now()})
	if err != nil {
		return Plan{}, err // the file was checked at upload; only a changed rule gets here
	}
	verified, err := linkimportdb.New().LinkImportVerifiedDomains(ctx, s.db.Conn(ctx), ws)
	if err != nil {
		return Plan{}, store.InterpretError(err)
	}
	taken, err := s.takenCodes(ctx, rows)
	if err != nil {
		return Plan{}, err
	}
	plan := Plan{Rows: make([]PlannedRow, len(rows)), Counts: map[Outcome]int{}}
	firstRow := map[codeKey]int{}
	for i, r := range rows {
		p := PlannedRow{Number: r.Number, Outcome: Created, Message: r.Input.TargetURL.String()}
		switch {
		case !r.Valid():
			p.Outcome, p.Message = Invalid, r.Message()
		case r.Input.Domain != nil && !slices.Contains(verified, r.Input.Domain.String()):
			p.Outcome, p.Message = DomainUnusable, "domain: "+r.Input.Domain.String()+" "+link.ErrDomainUnusable.Error()
		case !r.Input.Code.IsZero():
			k := keyOf(r.Input)
			if taken[k] {
				p.Outcome, p.Message = CodeTaken, takenMessage(r.Input)
			} else if first, dup := firstRow[k]; dup {
				p.Outcome, p.Message = CodeTaken, fmt.Sprintf("code: %q is also in row %d of this file", r.Input.Code, first)
			} else {
				firstRow[k] = r.Number
			}
		}
		plan.Rows[i] = p
		plan.Counts[p.Outcome]++
	}
	slices.SortStableFunc(plan.Rows, func(a, b PlannedRow) int { return boolInt(a.Outcome == Created) - boolInt(b.Outcome == Created) })
	return plan, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// codeKey is a code on a domain ("" for the default short domain).
type codeKey struct {
	Domain string `json:"domain"`
	Code   string `json:"code"`
}

func keyOf(in link.CreateInput) codeKey {
	k := codeKey{Code: in.Code.String()}
	if in.Domain != nil {
		k.Domain = in.Domain.String()
	}
	return k
}

// takenCodes are the custom codes of valid rows that are taken already,
// asked 5,000 at a time.
func (s *Service) takenCodes(ctx context.Context, rows []linkcsv.Row) (map[codeKey]bool, error) {
	var pairs []codeKey
	for _, r := range rows {
		if r.Valid() && !r.Input.Code.IsZero() {
			pairs = append(pairs, keyOf(r.Input))
		}
	}
	taken := map[codeKey]bool{}
	for chunk := range slices.Chunk(pairs, 5000) {
		raw, err := json.Marshal(chunk)
		if err != nil {
			return nil, err
		}
		found, err := linkimportdb.New().LinkImportTaken(ctx, s.db.Conn(ctx), raw)
		if err != nil {
			return nil, store.InterpretError(err)
		}
		for _, f := range found {
			taken[codeKey{Domain: f.Domain, Code: f.Code}] = true
		}
	}
	return taken, nil
}

// takenMessage says that a row's code is taken.
func takenMessage(in link.CreateInput) string {
	if in.Domain != nil {
		return fmt.Sprintf("code: %q is already taken on %s (codes of deleted links are never reused); untick “keep the codes” for new ones", in.Code, in.Domain)
	}
	return fmt.Sprintf("code: %q is already taken (codes of deleted links are never reused); untick “keep the codes” for new ones", in.Code)
}
