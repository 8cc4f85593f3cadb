package webhook

import (
	"context"
	"time"
)

// WriteSuccessesForTest writes a success of attempt 1 for each job as one
// batch of the batcher (successBatcher.write), and returns each one's error.
func (s *Service) WriteSuccessesForTest(ctx context.Context, jobs []DeliverArgs) []error {
	batch := make([]*queuedSuccess, len(jobs))
	for i, a := range jobs {
		status := int32(204)
		batch[i] = &queuedSuccess{row: successOf(a, 1, outcome{status: &status, duration: time.Millisecond}, s.now().UTC())}
	}
	return s.successes.write(ctx, batch)
}
