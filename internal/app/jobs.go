package app

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/erasure"
	"github.com/linkqr/linkqr/internal/idempotency"
	"github.com/linkqr/linkqr/internal/linkimport"
	"github.com/linkqr/linkqr/internal/mail"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/retention"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/webhook"
	"github.com/linkqr/linkqr/web"
)

// newJobs configures River: the workers and periodic jobs of this process.
// River keeps its queue in our PostgreSQL, so any instance may run any job
// and a job survives restarts. Every role inserts jobs (a scan or an API
// call enqueues deliveries in its own transaction); only the worker role
// works them, and of the workers River's elected leader alone runs the
// periodic jobs, so they run once however many workers there are. Other
// roles get an insert-only client: the same workers registered (River
// checks an inserted job's kind against them) but no queues, and it is
// never started.
//
// River runs on the direct pool: it LISTENs for new jobs and leadership,
// which PgBouncer's transaction pooling cannot carry. Jobs inserted in a
// request's transaction go through that transaction, on whatever pool it
// came from.
func (a *App) newJobs() (*river.Client[pgx.Tx], error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &idempotency.PurgeWorker{DB: a.DB, Log: a.Log})
	river.AddWorker(workers, &scan.PartitionWorker{DB: a.DB})
	river.AddWorker(workers, a.Webhooks.Worker())
	river.AddWorker(workers, &oauth.RotateWorker{Service: a.OAuth})
	river.AddWorker(workers, &retention.Worker{Purger: a.Retention})
	river.AddWorker(workers, &domain.RecheckWorker{Service: a.Domains})
	river.AddWorker(workers, &erasure.PurgeWorker{Service: a.Erasure})
	river.AddWorker(workers, &linkimport.Worker{Service: a.LinkImports})
	queues := map[string]river.QueueConfig{
		river.QueueDefault: {MaxWorkers: 10},
		// River fetches a queue at most once per FetchCooldown, taking at
		// most its free workers, so throughput is bounded by about
		// MaxWorkers/FetchCooldown: River's default 100 ms with 20
		// workers gave ~180 deliveries/s (make bench). Fetching every
		// 10 ms, webhook.Workers (64) deliver 3,200–3,600/s to a local
		// receiver on 2 cores, 32 did 2,200–2,400 (webhook.Workers says
		// why); slow receivers hold a worker each for up to the 10 s
		// timeout.
		webhook.Queue: {MaxWorkers: webhook.Workers, FetchCooldown: 10 * time.Millisecond},
	}
	if a.Config.SMTP.Enabled() {
		river.AddWorker(workers, &mail.Worker{Outbox: a.Mail, Sender: mail.NewSender(a.Config.SMTP, a.Config.MailFrom), Log: a.Log.With("component", "mail")})
		river.AddWorker(workers, &account.ResetRequestWorker{Service: a.Accounts})
		queues[mail.Queue] = river.QueueConfig{MaxWorkers: mail.Workers}
	}
	cfg := &river.Config{
		Logger:  a.Log.With("component", "river"),
		Workers: workers,
	}
	if a.Config.Roles.Worker() {
		cfg.Queues = queues
		cfg.PeriodicJobs = append(periodicJobs(), retention.PeriodicJobs(a.Config.Retention.Interval)...)
	}
	client, err := river.NewClient(riverpgxv5.New(a.direct), cfg)
	if err != nil {
		return nil, fmt.Errorf("configure background jobs: %w", err)
	}
	a.Webhooks.UseJobs(client)
	a.Erasure.UseJobs(client)
	a.LinkImports.UseJobs(client)
	if a.Mail.Enabled() {
		a.Mail.UseJobs(client)
		a.Accounts.UseMail(func(ctx context.Context, tx pgx.Tx, n account.Notice) error {
			return a.Mail.Enqueue(ctx, tx, web.ComposeNotice(n))
		}, client)
	}
	return client, nil
}

// periodicJobs are the jobs River's leader inserts on a schedule.
func periodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
			func() (river.JobArgs, *river.InsertOpts) { return idempotency.PurgeArgs{}, nil },
			&river.PeriodicJobOpts{ID: "idempotency_purge", RunOnStart: true}),
		river.NewPeriodicJob(river.PeriodicInterval(24*time.Hour),
			func() (river.JobArgs, *river.InsertOpts) { return scan.PartitionArgs{}, nil },
			&river.PeriodicJobOpts{ID: "scan_partitions"}),
		// Rotates the OAuth signing keys when due (every 30 days).
		river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
			func() (river.JobArgs, *river.InsertOpts) { return oauth.RotateArgs{}, nil },
			&river.PeriodicJobOpts{ID: "oauth_key_rotation", RunOnStart: true}),
		// Verifies pending custom domains whose TXT record appeared, and
		// notices verified ones whose record disappeared (a bounded batch).
		river.NewPeriodicJob(river.PeriodicInterval(domain.RecheckEvery),
			func() (river.JobArgs, *river.InsertOpts) { return domain.RecheckArgs{}, nil },
			&river.PeriodicJobOpts{ID: "domain_recheck"}),
		// Removes deleted workspaces' rows (also queued by each deletion;
		// this catches deletions made by the operator command).
		river.NewPeriodicJob(river.PeriodicInterval(time.Minute),
			func() (river.JobArgs, *river.InsertOpts) { return erasure.PurgeArgs{}, nil },
			&river.PeriodicJobOpts{ID: "workspace_purge", RunOnStart: true}),
	}
}

// runJobs starts River and stops it (letting running jobs finish) when ctx ends.
func (a *App) runJobs(ctx context.Context) {
	if err := a.jobs.Start(ctx); err != nil {
		a.Log.Error("background jobs did not start", "err", err)
		return
	}
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := a.jobs.Stop(stopCtx); err != nil {
		a.Log.Warn("background jobs did not stop cleanly", "err", err)
	}
}
