package linkimport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// Plan is a page of a dry run: the rows it shows, in the dry run's order
// (problems first, then the rows that will be created, each by row), and
// how many rows of the file have each outcome. It creates nothing.
type Plan struct {
	Rows   []PlannedRow
	Counts map[Outcome]int
}

// DryRun reads an import's file again and tells, for every row, whether
// it would be created now: invalid cells, a code taken (by any link of the
// instance, a retired code, or an earlier row of the file) and a domain
// that is not a verified domain of the workspace. It returns the counts
// of every outcome and the rows from offset, at most limit of them.
//
// It holds a batch of rows and the page, never the file: the file is read
// a piece at a time and its codes are asked about BatchRows rows at a
// time (an earlier row with the same code is found in link_import_codes,
// which the upload filled). The rows that will be created come after all
// the problems, whose number is known only at the end, so when the page
// shows some of them the file is read a second time to pick them out;
// between the two readings a bit per row remembers which they are.
func (s *Service) DryRun(ctx context.Context, ws uuid.UUID, imp Import, offset, limit int) (Plan, error) {
	if imp.KeepCodes && !imp.codesListed {
		if err := s.listKeptCodes(ctx, ws, imp); err != nil {
			return Plan{}, err
		}
	}
	opts := linkcsv.ImportOptions{KeepCodes: imp.KeepCodes, Now: time.Now()}
	rd, err := linkcsv.NewReader(s.open(ctx, ws, imp.ID), nil, opts)
	if err != nil {
		return Plan{}, err // the file was checked at upload; only a changed rule gets here
	}
	verified, err := linkimportdb.New().LinkImportVerifiedDomains(ctx, s.db.Conn(ctx), ws)
	if err != nil {
		return Plan{}, store.InterpretError(err)
	}
	plan := Plan{Counts: map[Outcome]int{}}
	var (
		creatable bitset // by data row: will be created
		problems  int
		index     int // data rows judged
	)
	batch := make([]linkcsv.Row, 0, BatchRows)
	judge := func() error {
		outcomes, err := s.judge(ctx, imp.ID, verified, batch, opts.Now)
		if err != nil {
			return err
		}
		for _, p := range outcomes {
			plan.Counts[p.Outcome]++
			if p.Outcome == Created {
				creatable.set(index)
			} else {
				if problems >= offset && problems < offset+limit {
					plan.Rows = append(plan.Rows, p)
				}
				problems++
			}
			index++
		}
		batch = batch[:0]
		return nil
	}
	for {
		r, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Plan{}, err
		}
		if batch = append(batch, r); len(batch) == BatchRows {
			if err := judge(); err != nil {
				return Plan{}, err
			}
		}
	}
	if err := judge(); err != nil {
		return Plan{}, err
	}
	// The page's rows that will be created: those from the (offset −
	// problems)th on, in file order.
	from, to := max(0, offset-problems), min(plan.Counts[Created], max(0, offset+limit-problems))
	if from >= to {
		return plan, nil
	}
	if rd, err = linkcsv.NewReader(s.open(ctx, ws, imp.ID), nil, opts); err != nil {
		return Plan{}, err
	}
	for i, seen := 0, 0; seen < to; i++ {
		r, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Plan{}, err
		}
		if !creatable.has(i) {
			continue
		}
		if seen >= from {
			plan.Rows = append(plan.Rows, PlannedRow{Number: r.Number, Outcome: Created, Message: r.Input.TargetURL.String()})
		}
		seen++
	}
	return plan, nil
}

// judge tells the outcome of each of a batch's rows, asking the database
// once about the batch's codes.
func (s *Service) judge(ctx context.Context, importID uuid.UUID, verified []string, rows []linkcsv.Row, now time.Time) ([]PlannedRow, error) {
	usable := func(r linkcsv.Row) bool {
		return r.Input.Domain == nil || slices.Contains(verified, r.Input.Domain.String())
	}
	var pairs []codeKey
	asked := map[codeKey]bool{}
	for _, r := range rows {
		if k := keyOf(r.Input); r.Valid() && usable(r) && !r.Input.Code.IsZero() && !asked[k] {
			asked[k] = true
			pairs = append(pairs, k)
		}
	}
	checks := map[codeKey]linkimportdb.LinkImportCodeCheckRow{}
	if len(pairs) > 0 {
		raw, err := json.Marshal(pairs)
		if err != nil {
			return nil, err
		}
		found, err := linkimportdb.New().LinkImportCodeCheck(ctx, s.db.Conn(ctx), linkimportdb.LinkImportCodeCheckParams{ImportID: importID, Now: now, Pairs: raw})
		if err != nil {
			return nil, store.InterpretError(err)
		}
		for _, f := range found {
			checks[codeKey{Domain: f.Domain, Code: f.Code}] = f
		}
	}
	out := make([]PlannedRow, len(rows))
	for i, r := range rows {
		p := PlannedRow{Number: r.Number, Outcome: Created, Message: r.Input.TargetURL.String()}
		switch {
		case !r.Valid():
			p.Outcome, p.Message = Invalid, r.Message()
		case !usable(r):
			p.Outcome, p.Message = DomainUnusable, "domain: "+r.Input.Domain.String()+" "+link.ErrDomainUnusable.Error()
		case !r.Input.Code.IsZero():
			c := checks[keyOf(r.Input)]
			if c.Taken {
				p.Outcome, p.Message = CodeTaken, takenMessage(r.Input)
			} else if c.FirstRow > 0 && int(c.FirstRow) < r.Number {
				p.Outcome, p.Message = CodeTaken, fmt.Sprintf("code: %q is also in row %d of this file", r.Input.Code, c.FirstRow)
			}
		}
		out[i] = p
	}
	return out, nil
}

// bitset is a set of small non-negative integers, a bit each.
type bitset []uint64

func (b *bitset) set(i int) {
	for len(*b) <= i/64 {
		*b = append(*b, 0)
	}
	(*b)[i/64] |= 1 << (i % 64)
}

func (b bitset) has(i int) bool { return i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0 }

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

// takenMessage says that a row's code is taken.
func takenMessage(in link.CreateInput) string {
	if in.Domain != nil {
		return fmt.Sprintf("code: %q is already taken on %s (codes of deleted links are never reused); untick “keep the codes” for new ones", in.Code, in.Domain)
	}
	return fmt.Sprintf("code: %q is already taken (codes of deleted links are never reused); untick “keep the codes” for new ones", in.Code)
}
