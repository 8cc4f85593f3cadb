package retention

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"
)

// Args is the periodic River job that runs one retention job (Job, one of
// Jobs). Each job is a periodic job of its own, so one that fails or
// takes long holds up none of the others.
type Args struct {
	Job string `json:"job"`
}

// Kind names the job in River's table.
func (Args) Kind() string { return "retention" }

// Worker runs Args jobs.
type Worker struct {
	river.WorkerDefaults[Args]
	Purger *Purger
}

// Work runs the job. A run deletes a bounded number of rows; what is left
// goes on the next run. A job of an unknown name is cancelled, not retried.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	_, err := w.Purger.Run(ctx, job.Args.Job)
	if errors.Is(err, ErrUnknownJob) {
		return river.JobCancel(err)
	}
	return err
}

// Timeout lifts River's default of a minute: a run is bounded by its
// statements (Policy.MaxBatches), and counting a month's partition before
// dropping it reads the whole month.
func (w *Worker) Timeout(*river.Job[Args]) time.Duration { return 30 * time.Minute }

// PeriodicJobs are the retention jobs, each every interval and once when
// the leader starts.
func PeriodicJobs(interval time.Duration) []*river.PeriodicJob {
	jobs := make([]*river.PeriodicJob, 0, len(Jobs))
	for _, name := range Jobs {
		jobs = append(jobs, river.NewPeriodicJob(river.PeriodicInterval(interval),
			func() (river.JobArgs, *river.InsertOpts) { return Args{Job: name}, nil },
			&river.PeriodicJobOpts{ID: "retention_" + name, RunOnStart: true}))
	}
	return jobs
}
