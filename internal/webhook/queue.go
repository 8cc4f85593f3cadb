package webhook

import (
	"context"
	"time"

	"github.com/linkqr/linkqr/internal/store"
)

// QueueStates are the states of an unfinished delivery job, the label set
// of the queue-depth metric (River's finished states — completed,
// cancelled, discarded — are history, not depth).
var QueueStates = []string{"available", "pending", "retryable", "running", "scheduled"}

// QueueStats is the backlog of the delivery queue.
type QueueStats struct {
	// Depth counts the queue's unfinished jobs by state (every state of
	// QueueStates is present).
	Depth map[string]int64
	// OldestAvailableAge is how long the oldest delivery that is due has
	// waited for a worker (0 when none waits): the queue's lateness.
	OldestAvailableAge time.Duration
}

// queueStatsSQL reads River's job table, which is River's schema rather
// than ours, so it is not among the sqlc queries. It touches only
// unfinished jobs of the webhooks queue, through River's
// (state, queue, priority, scheduled_at, id) fetch index, so it stays cheap
// however much finished history the table holds.
const queueStatsSQL = `
SELECT state::text, count(*), COALESCE(EXTRACT(EPOCH FROM now() - min(scheduled_at)), 0)::float8
FROM river_job
WHERE queue = $1 AND state IN ('available', 'pending', 'retryable', 'running', 'scheduled')
GROUP BY state`

// QueueStats measures the delivery queue with one query, for the metrics.
func (s *Service) QueueStats(ctx context.Context) (QueueStats, error) {
	st := QueueStats{Depth: make(map[string]int64, len(QueueStates))}
	for _, state := range QueueStates {
		st.Depth[state] = 0
	}
	rows, err := s.db.Conn(ctx).Query(ctx, queueStatsSQL, Queue)
	if err != nil {
		return st, store.InterpretError(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			state  string
			n      int64
			oldest float64
		)
		if err := rows.Scan(&state, &n, &oldest); err != nil {
			return st, err
		}
		st.Depth[state] = n
		if state == "available" && oldest > 0 {
			st.OldestAvailableAge = time.Duration(oldest * float64(time.Second))
		}
	}
	return st, store.InterpretError(rows.Err())
}
