package audit

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/audit/internal/auditdb"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/store"
)

// Verification is what Verify found: how many entries it read, and the
// first whose chain breaks with why.
type Verification struct {
	Entries int    `json:"entries"`
	OK      bool   `json:"ok"`
	Broken  string `json:"broken,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Verify reads a workspace's chain forward and checks every link of it:
// each entry's hash is the SHA-256 of its prev_hash and its canonical JSON,
// each prev_hash is the hash of the entry before, and the chain's head
// names the last entry. The oldest entry left is trusted for its prev_hash:
// retention deletes entries from the start of the chain, so after a purge
// verification starts where the chain now starts.
func Verify(ctx context.Context, db *store.DB, workspaceID uuid.UUID) (Verification, error) {
	const pageSize = 1000
	q := auditdb.New()
	var (
		v       Verification
		after   int64
		prev    string
		lastSeq int64
	)
	for {
		rows, err := q.AuditEventChainPage(ctx, db.Conn(ctx), auditdb.AuditEventChainPageParams{WorkspaceID: workspaceID, AfterSeq: after, Lim: pageSize})
		if err != nil {
			return v, store.InterpretError(err)
		}
		for _, r := range rows {
			v.Entries++
			e, err := fromRow(r)
			if err != nil {
				return v.broken(r.ID, "its changes are not JSON"), nil
			}
			if v.Entries > 1 && e.PrevHash != prev {
				return v.broken(r.ID, "its prev_hash is not the hash of the entry before it"), nil
			}
			h, err := e.ComputeHash()
			if err != nil || h != e.Hash {
				return v.broken(r.ID, "its hash does not match its content"), nil
			}
			prev, lastSeq = e.Hash, r.Seq
		}
		if len(rows) < pageSize {
			break
		}
		after = rows[len(rows)-1].Seq
	}
	head, err := q.AuditHeadGet(ctx, db.Conn(ctx), workspaceID)
	switch err = store.InterpretError(err); {
	case errors.Is(err, id.ErrNotFound):
		if v.Entries > 0 {
			v.Reason = "the chain has entries but no head"
			return v, nil
		}
	case err != nil:
		return v, err
	case v.Entries > 0 && (head.Seq != lastSeq || head.Hash != prev):
		v.Reason = "the last entry is not the head of the chain: entries after it are missing"
		return v, nil
	}
	v.OK = true
	return v, nil
}

func (v Verification) broken(entry uuid.UUID, reason string) Verification {
	v.Broken, v.Reason = id.Format(id.Audit, entry), reason
	return v
}
