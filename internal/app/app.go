// Package app assembles one linkqr process: database (embedded or external),
// migrations, the HTTP router and, later, background workers. cmd/linkqr and
// the test kit both build the service through it, so tests exercise exactly
// what production runs.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/certs"
	"github.com/linkqr/linkqr/internal/clientip"
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/dbhealth"
	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/erasure"
	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/linkimport"
	"github.com/linkqr/linkqr/internal/mail"
	"github.com/linkqr/linkqr/internal/membership"
	"github.com/linkqr/linkqr/internal/metrics"
	"github.com/linkqr/linkqr/internal/notify"
	"github.com/linkqr/linkqr/internal/oauth"
	"github.com/linkqr/linkqr/internal/pgembed"
	"github.com/linkqr/linkqr/internal/priority"
	"github.com/linkqr/linkqr/internal/problem"
	"github.com/linkqr/linkqr/internal/qrdesign"
	"github.com/linkqr/linkqr/internal/qrserve"
	"github.com/linkqr/linkqr/internal/ratelimit"
	"github.com/linkqr/linkqr/internal/redirect"
	"github.com/linkqr/linkqr/internal/replica"
	"github.com/linkqr/linkqr/internal/retention"
	"github.com/linkqr/linkqr/internal/scan"
	"github.com/linkqr/linkqr/internal/sealbox"
	"github.com/linkqr/linkqr/internal/sso"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/twofactor"
	"github.com/linkqr/linkqr/internal/utmtemplate"
	"github.com/linkqr/linkqr/internal/webhook"
	"github.com/linkqr/linkqr/web"
)

// writeTimeout bounds the handling and writing of one response, against
// clients that never read what they asked for. It is deliberately generous:
// the largest response, a 4096-pixel QR PNG of a few hundred KiB, reaches a
// 10 kB/s client in well under a minute.
const writeTimeout = 5 * time.Minute

// ShutdownGrace is how long in-flight requests may take to finish after
// SIGINT/SIGTERM (docs/operations.md#commands).
const ShutdownGrace = 10 * time.Second

// App is a configured, migrated linkqr service ready to serve.
type App struct {
	Config *config.Config
	Log    *slog.Logger
	Pool   *pgxpool.Pool // for the process machinery: LISTEN, River, readiness
	DB     *store.DB     // what every service queries through
	// ScanDB and ResolveDB are small pools of their own for the hot path:
	// the scan writer and the redirect's cache-miss lookups never wait for
	// a connection behind API queries (docs/architecture.md "Analytics at scale", "Isolation").
	ScanDB    *store.DB
	ResolveDB *store.DB
	// Reads is where lag-tolerant reads go (analytics, scan lists and
	// exports): the replica of LINKQR_DATABASE_READ_URL while Replica finds
	// it healthy, else the primary. Replica is nil without a replica.
	Reads   *store.DB
	Replica *replica.Router
	Metrics *metrics.Metrics
	// Database says whether PostgreSQL is reachable: during an outage the
	// redirect serves cached codes, the API answers 503 at once and
	// /readyz says not ready.
	Database *dbhealth.Monitor

	Keys     *apikey.Service
	Accounts *account.Service
	// Roles caches what each credential's owner is in each workspace.
	Roles     *membership.Roles
	Links     *link.Service
	Redirects *redirect.Handler
	// visitorHasher is the scans' daily visitor hash, shared by the
	// recorder and the redirect (a split's variant follows it).
	visitorHasher *analytics.VisitorHasher
	// Folder adds recorded scans to the analytics rollups and scan_count.
	Folder *scan.Folder
	// Priority tells deliveries and analytics when the redirect is busy.
	Priority *priority.Governor
	Scans    *scan.Recorder
	QR       *qrserve.Server // one render bound and cache for API and UI
	// Designs are the links' and workspaces' QR designs; their saves
	// render under QR's bound.
	Designs *qrdesign.Service
	// UTMTemplates are the workspaces' UTM templates (the UI's link forms).
	UTMTemplates *utmtemplate.Service
	Webhooks     *webhook.Service
	Domains      *domain.Service
	// SSO is single sign-on with workspaces' OIDC providers.
	SSO *sso.Service
	// TwoFactor keeps users' second factors and the workspaces' requirement.
	TwoFactor *twofactor.Service
	OAuth     *oauth.Service
	// Certs obtains TLS certificates for verified domains; nil without
	// LINKQR_TLS_ADDR.
	Certs *certs.Manager
	// Erasure deletes workspaces and accounts (and purges them in the background).
	Erasure *erasure.Service
	// LinkImports keeps the Links page's CSV imports and runs them (a job).
	LinkImports *linkimport.Service
	// Mail queues e-mail (disabled without LINKQR_SMTP_URL).
	Mail *mail.Outbox
	// Retention deletes what is past its age (periodic jobs, worker role).
	Retention *retention.Purger
	// RateLimiter charges /api/v1 requests to their credential's budget.
	RateLimiter ratelimit.Limiter
	// Counter counts link password guesses and OAuth registrations, across
	// instances when Redis is configured.
	Counter ratelimit.Counter

	events *event.Recorder // records every service's events; fans out to webhooks

	cluster  *pgembed.Cluster // nil when LINKQR_DATABASE_URL is set or the pool was given
	ownPools []*pgxpool.Pool  // ScanDB's, ResolveDB's, the direct and the replica pools, closed by Close
	// direct holds the sessions PgBouncer's transaction pooling cannot
	// carry (LISTEN, River, migrations): LINKQR_DATABASE_DIRECT_URL's pool,
	// or Pool without it.
	direct   *pgxpool.Pool
	problems problem.Writer
	router   chi.Router
	handler  http.Handler // router inside what must come before it (outermost)
	draining atomic.Bool
	// eventWake wakes long polls of GET /api/v1/events on the database's
	// notification of a new event.
	eventWake *event.Wakeup
	listener  *notify.Listener
	jobs      *river.Client[pgx.Tx]

	closeRateLimiter func()       // closes the Redis client, when there is one
	closeGeo         func() error // closes the LINKQR_GEOIP_DB file, when there is one

	stopWorkers context.CancelFunc
	workers     sync.WaitGroup
	// deliveryPace and reportPace pace the work that yields to the redirect.
	deliveryPace, reportPace *priority.Budget

	bodyReadTimeout atomic.Int64                // nanoseconds; 0 means httpmw.BodyReadTimeout (tests shorten it)
	metricsAddr     atomic.Pointer[net.TCPAddr] // where LINKQR_METRICS_ADDR is bound, once it is
	tlsAddr         atomic.Pointer[net.TCPAddr] // where LINKQR_TLS_ADDR is bound, once it is
}

// Database opens the configured database: the embedded cluster (mode says
// whether another process may share it) or LINKQR_DATABASE_URL. The returned
// cluster is nil for an external database.
func Database(ctx context.Context, cfg *config.Config, log *slog.Logger, mode pgembed.Mode) (*pgxpool.Pool, *pgembed.Cluster, error) {
	if !cfg.Embedded() {
		pool, err := store.Connect(ctx, cfg.DatabaseURL, MainPoolConns(cfg.Roles))
		return pool, nil, err
	}
	cluster, err := pgembed.Open(ctx, pgembed.Options{
		DataDir: filepath.Join(cfg.DataDir, "pg"),
		Mode:    mode,
		Logger:  log,
	})
	if err != nil {
		return nil, nil, err
	}
	pool, err := store.Connect(ctx, cluster.ConnString(), MainPoolConns(cfg.Roles))
	if err != nil {
		_ = cluster.Close(context.WithoutCancel(ctx))
		return nil, nil, err
	}
	return pool, cluster, nil
}

// Migrate brings the schema of pool's database up to date, through
// LINKQR_DATABASE_DIRECT_URL when it is set (operator commands; serve
// migrates on the direct pool it keeps).
func Migrate(ctx context.Context, cfg *config.Config, pool *pgxpool.Pool, log *slog.Logger) error {
	if cfg.DatabaseDirectURL == "" {
		return store.Migrate(ctx, pool, log)
	}
	direct, err := store.Connect(ctx, cfg.DatabaseDirectURL, DirectPoolConns)
	if err != nil {
		return fmt.Errorf("LINKQR_DATABASE_DIRECT_URL: %w", err)
	}
	defer direct.Close()
	return store.Migrate(ctx, direct, log)
}

// Open is what `linkqr serve` runs: database, migrations, router.
func Open(ctx context.Context, cfg *config.Config, log *slog.Logger) (*App, error) {
	if _, err := cfg.EnsureSecretKey(); err != nil {
		return nil, err
	}
	pool, cluster, err := Database(ctx, cfg, log, pgembed.Exclusive)
	if err != nil {
		return nil, err
	}
	a, err := newApp(ctx, cfg, log, pool, cluster)
	if err != nil {
		pool.Close()
		if cluster != nil {
			_ = cluster.Close(context.WithoutCancel(ctx))
		}
		return nil, err
	}
	return a, nil
}

// New builds an App on a pool the caller owns (tests); it migrates the
// database and does not close the pool on Close.
func New(ctx context.Context, cfg *config.Config, log *slog.Logger, pool *pgxpool.Pool) (*App, error) {
	if _, err := cfg.EnsureSecretKey(); err != nil {
		return nil, err
	}
	return newApp(ctx, cfg, log, pool, nil)
}

// Sizes of the dedicated pools. Each scan writer holds one connection
// while its batch is in flight, the folder one more, and the writer of the
// outage buffer one after an outage; the redirect's
// cache misses are single indexed lookups, so a few connections serve many
// thousands a second. Both open connections only when used, so a role
// that never records scans or resolves codes holds none.
const (
	ScanPoolConns    = scan.DefaultWriters + 2
	ResolvePoolConns = 4
)

// Sizes of the general pool (unless the URL sets pool_max_conns) and of
// the direct one. The general pool serves API requests and job work; a
// redirect-only process uses it only for readiness, the webhook
// subscriptions its scans may fan out to and start-up, so it takes few
// connections from PgBouncer or PostgreSQL. The direct pool holds the
// LISTEN connection and migrations, and in a worker River's fetching,
// completing and leader election.
const (
	RedirectPoolConns     = 4
	DirectPoolConns       = 3
	WorkerDirectPoolConns = 12
)

// MainPoolConns is the general pool's size for roles: 0 means
// store.DefaultMaxConns.
func MainPoolConns(roles config.Roles) int32 {
	if roles.API() || roles.Worker() {
		return 0
	}
	return RedirectPoolConns
}

// dedicatedPool opens a pool of at most n connections to the database of
// pool (with its settings), created on demand.
func dedicatedPool(ctx context.Context, pool *pgxpool.Pool, n int32) (*pgxpool.Pool, error) {
	cfg := pool.Config().Copy()
	cfg.MaxConns, cfg.MinConns = n, 0
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return p, nil
}

func newApp(ctx context.Context, cfg *config.Config, log *slog.Logger, pool *pgxpool.Pool, cluster *pgembed.Cluster) (a *App, err error) {
	var own []*pgxpool.Pool
	defer func() {
		if err != nil {
			for _, p := range own {
				p.Close()
			}
		}
	}()
	direct := pool
	if cfg.DatabaseDirectURL != "" {
		size := int32(DirectPoolConns)
		if cfg.Roles.Worker() {
			size = WorkerDirectPoolConns
		}
		if direct, err = store.Connect(ctx, cfg.DatabaseDirectURL, size); err != nil {
			return nil, fmt.Errorf("LINKQR_DATABASE_DIRECT_URL: %w", err)
		}
		own = append(own, direct)
	}
	if err := store.Migrate(ctx, direct, log); err != nil {
		return nil, err
	}
	db := store.NewDB(pool)
	roles := membership.NewRoles(db)
	// The redirect's pools connect directly to the primary, bypassing
	// PgBouncer: they hold their few connections all the time, so pooling
	// saves nothing, and while PostgreSQL is down a direct connection fails
	// at once where PgBouncer would queue the query, leaving redirects to
	// wait behind a full scan buffer (deploy/README.md).
	scanPool, err := dedicatedPool(ctx, direct, ScanPoolConns)
	if err != nil {
		return nil, err
	}
	own = append(own, scanPool)
	resolvePool, err := dedicatedPool(ctx, direct, ResolvePoolConns)
	if err != nil {
		return nil, err
	}
	own = append(own, resolvePool)
	a = &App{
		Config:    cfg,
		Log:       log,
		Pool:      pool,
		DB:        db,
		ScanDB:    store.NewDB(scanPool),
		ResolveDB: store.NewDB(resolvePool),
		Reads:     db,
		direct:    direct,
		Metrics:   metrics.New(),
		Keys:      apikey.NewService(db, log, config.DeriveKey(cfg.SecretKey, "api-key-cache")),
		Roles:     roles,
		QR:        qrserve.New(qrserve.Config{}),
		cluster:   cluster,
		problems:  problem.Writer{BaseURL: cfg.BaseURL.String()},
		listener:  notify.New(direct, log),
		// The primary itself is probed, on the direct connection when
		// there is one: through PgBouncer a probe may wait for a server
		// connection instead of failing.
		Database: dbhealth.New(direct.Ping, log),
	}
	a.Retention = &retention.Purger{DB: db, Policy: cfg.Retention, Log: log.With("component", "retention"), Purged: retention.NewPurgedCounter()}
	a.Metrics.Registry.MustRegister(a.Retention.Purged)
	registerBudgetMetrics(a.Metrics.Registry)
	a.Metrics.GaugeFunc("linkqr_database_up", "1 while PostgreSQL is reachable, 0 during an outage (as this process last saw it).", func() float64 {
		if a.Database.Up() {
			return 1
		}
		return 0
	})
	if cfg.DatabaseReadURL != "" && cfg.Roles.API() {
		reads, err := a.openReplica(ctx)
		if err != nil {
			return nil, err
		}
		own = append(own, reads)
	}
	a.ownPools = own
	a.Keys.Subscribe(a.listener)
	a.Roles.Subscribe(a.listener)
	if a.Mail, err = mail.NewOutbox(cfg.SMTP.Enabled(), config.DeriveKey(cfg.SecretKey, "mail-jobs")); err != nil {
		return nil, err
	}
	if err := a.newOAuth(ctx); err != nil {
		return nil, err
	}
	a.Accounts = account.NewService(db, cfg.BaseURL.String(), roles, a.Keys.Invalidate, a.OAuth.Invalidate)
	a.newPriority()
	if err := a.newWebhooks(); err != nil {
		return nil, err
	}
	if err := scan.EnsurePartitions(ctx, a.DB, time.Now()); err != nil {
		return nil, err
	}
	scans, err := a.newScanRecorder()
	if err != nil {
		return nil, err
	}
	a.Scans = scans
	a.Folder = &scan.Folder{
		DB: a.ScanDB, Log: log, Interval: cfg.FoldInterval,
		Busy: a.Priority.Contended, SaturatedInterval: cfg.SaturatedFoldInterval,
		OnFold: func(f scan.Folded, took time.Duration) {
			a.Metrics.ScansFolded.Add(float64(f.Scans))
			a.Metrics.FoldDuration.Observe(took.Seconds())
		},
		OnError: func(error) { a.Metrics.FoldErrors.Inc() },
	}
	if cfg.Roles.Worker() { // elsewhere no fold runs, and a lag of 0 would mislead
		a.Metrics.GaugeFunc("linkqr_scan_fold_lag_seconds", "How far scan_count and analytics are behind: seconds since the as_of of the last fold this instance finished.", func() float64 {
			return a.Folder.Lag().Seconds()
		})
	}
	clientIPs := clientip.Resolver{Trusted: cfg.TrustedProxies}
	a.Designs = qrdesign.NewService(a.DB, a.Config.ShortBaseURL.String()+"/"+qrdesign.SampleCode+"?"+link.QRQuery, a.QR.Reserve)
	a.UTMTemplates = utmtemplate.NewService(a.DB)
	countries, err := a.countries(cfg, clientIPs)
	if err != nil {
		return nil, err
	}
	if err := a.openRateLimiter(); err != nil {
		return nil, err
	}
	// The redirect resolves codes through its own pool (see ResolveDB);
	// the domains and links it caches are built after it, and tell it of
	// their changes.
	a.Redirects = redirect.New(redirect.Options{
		Resolver: link.NewResolver(a.ResolveDB, a.origins()), Sites: domain.NewSites(a.DB), DefaultOrigins: []string{cfg.ShortBaseURL.String(), cfg.BaseURL.String()},
		Recorder: a.Scans, Pages: web.RedirectPages(), ClientIP: clientIPs.Of, Country: countries.Country, DB: a.Database, Log: log,
		Hasher: a.visitorHasher, PasswordKey: config.DeriveKey(cfg.SecretKey, "link-password-cookie"),
		SecureCookies: cfg.ShortBaseURL.Scheme == "https", Guesses: a.Counter, Load: a.Priority,
	})
	certificates, err := a.certificateStates()
	if err != nil {
		return nil, err
	}
	a.Domains = domain.NewService(domain.Options{
		DB: a.DB, Resolver: domain.NewResolver(cfg.DNSResolver),
		ReservedHosts: []string{cfg.BaseURL.Hostname(), cfg.ShortBaseURL.Hostname()},
		Target:        cfg.CustomDomainTarget, Certificates: certificates,
	}, a.Redirects.DomainChanged)
	a.Links = link.NewService(a.DB, a.origins(), a.events, a.linkChanged)
	a.Links.Subscribe(a.listener)
	if err := a.newSignIn(); err != nil {
		return nil, err
	}
	if cfg.TLS.Enabled() {
		if err := a.newCerts(); err != nil {
			return nil, err
		}
	}
	a.Redirects.Subscribe(a.listener)
	a.eventWake = event.NewWakeup()
	a.eventWake.Subscribe(a.listener)
	a.Erasure = erasure.NewService(a.DB, a.erased)
	a.LinkImports = linkimport.New(a.DB, a.Links)
	a.router = a.routes()
	a.handler = a.outermost(a.router)
	jobs, err := a.newJobs()
	if err != nil {
		return nil, err
	}
	a.jobs = jobs
	a.startWorkers()
	select {
	case <-a.listener.Ready():
	case <-ctx.Done():
		a.StopWorkers()
		return nil, ctx.Err()
	}
	return a, nil
}

// linkChanged drops a changed code from this instance's redirect cache.
// The change is reported done once its NOTIFY has come back to this
// instance; PostgreSQL sent it to the other instances at the same time.
// Measured in deploy/topology_test.go: without the wait another instance
// served the old target for about 4 ms after the API answered, with it
// for 0–3 ms (docs/deployment.md).
func (a *App) linkChanged(code string) {
	a.Redirects.Invalidate(code)
	ctx, cancel := context.WithTimeout(context.Background(), changeEchoWait)
	defer cancel()
	a.listener.Heard(ctx, link.ChangedChannel, code, time.Now().Add(-time.Second))
}

// erased drops what a deletion ended from this instance's caches.
func (a *App) erased(r erasure.Revoked) {
	a.Keys.Invalidate(r.KeyIDs...)
	a.OAuth.Invalidate(r.OAuth...)
	for _, ws := range r.Workspaces {
		a.Redirects.WorkspaceDeleted(ws)
	}
}

// origins are where links' short URLs point.
func (a *App) origins() link.Origins { return Origins(a.Config) }

// Origins are where the short URLs of an installation configured by cfg
// point (the admin commands need them too).
func Origins(cfg *config.Config) link.Origins {
	return link.Origins{ShortBase: cfg.ShortBaseURL.String(), CustomScheme: cfg.CustomDomainScheme}
}

// newScanRecorder builds the scan buffer, reporting into the metrics.
func (a *App) newScanRecorder() (*scan.Recorder, error) {
	hasher, err := analytics.NewVisitorHasher(config.DeriveKey(a.Config.SecretKey, "visitor-hash"))
	if err != nil {
		return nil, err
	}
	a.visitorHasher = hasher // the redirect's splits use the scans' visitor hash
	rec := scan.NewRecorder(scan.Options{
		DB: a.ScanDB, Log: a.Log, Hasher: hasher, Origins: a.origins(),
		Subscriptions: a.Webhooks, Events: a.events,
		OnFlushed: func(f scan.Flushed) {
			a.Metrics.ScansRecorded.WithLabelValues("human").Add(float64(f.Human))
			a.Metrics.ScansRecorded.WithLabelValues("bot").Add(float64(f.Bots))
			a.Metrics.ScanWrite.Observe(f.Took.Seconds())
			a.Metrics.ScanUnwrittenAge.Observe(f.Oldest.Seconds())
		},
		OnFlushError: func(err error) {
			a.Metrics.ScanFlushErrors.Inc()
			a.Database.Observe(err)
		},
		OnDropped: func(n int) { a.Metrics.ScansDropped.Add(float64(n)) },
	})
	a.Metrics.GaugeFunc("linkqr_scan_buffer_depth", "Scans accepted but not yet written.", func() float64 { return float64(rec.Depth()) })
	a.Metrics.Total("linkqr_scan_bound_waits_total", "Redirects that waited for a scan write to commit because the answered-but-unwritten scans were at the crash bound (backpressure).",
		func() float64 { n, _ := rec.Backpressure(); return float64(n) })
	a.Metrics.Total("linkqr_scan_bound_wait_seconds_total", "Time redirects spent waiting at the crash bound for a scan write to commit, in all.",
		func() float64 { _, d := rec.Backpressure(); return d.Seconds() })
	a.Metrics.GaugeFunc("linkqr_scan_outage_buffer_depth", "Scans kept in memory because writing them failed (database unreachable); written when it is back.", func() float64 {
		return float64(rec.OutageDepth())
	})
	return rec, nil
}

// Handler is the complete HTTP handler of the service.
func (a *App) Handler() http.Handler { return a.handler }

// Router exposes the router so tests can add routes (a handler that panics,
// say) behind the real middleware chain before serving.
func (a *App) Router() chi.Router { return a.router }

// Serve accepts connections on ln until ctx is cancelled, then shuts down
// gracefully: no new connections, in-flight requests get ShutdownGrace.
// It also listens on LINKQR_METRICS_ADDR (unless "off"), for /metrics
// only, and on LINKQR_TLS_ADDR (when set), HTTPS with certificates on
// demand; it stops those listeners with the main one.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	servers := []*http.Server{a.newServer(a.handler)}
	listeners := []net.Listener{ln}
	if addr := a.Config.MetricsAddr; addr != "" {
		mln, err := net.Listen("tcp", addr)
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("listen on %s (LINKQR_METRICS_ADDR): %w", addr, err)
		}
		if tcp, ok := mln.Addr().(*net.TCPAddr); ok {
			a.metricsAddr.Store(tcp)
		}
		servers = append(servers, a.newServer(a.metricsRouter()))
		listeners = append(listeners, mln)
		a.Log.Info("serving metrics", "metrics_addr", mln.Addr().String())
	}
	if a.Certs != nil {
		tln, err := net.Listen("tcp", a.Config.TLS.Addr)
		if err != nil {
			for _, l := range listeners {
				_ = l.Close()
			}
			return fmt.Errorf("listen on %s (LINKQR_TLS_ADDR): %w", a.Config.TLS.Addr, err)
		}
		if tcp, ok := tln.Addr().(*net.TCPAddr); ok {
			a.tlsAddr.Store(tcp)
		}
		srv := a.newServer(a.handler)
		srv.TLSConfig = a.Certs.TLSConfig()
		servers = append(servers, srv)
		listeners = append(listeners, tln)
		a.Log.Info("serving https with certificates on demand", "tls_addr", tln.Addr().String(), "acme_directory", a.Config.TLS.Directory)
	}
	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go func() {
			if srv.TLSConfig != nil { // certificates come from TLSConfig.GetCertificate
				errc <- srv.ServeTLS(listeners[i], "", "")
				return
			}
			errc <- srv.Serve(listeners[i])
		}()
	}
	a.Log.Info("listening", "addr", ln.Addr().String(), "base_url", a.Config.BaseURL.String())

	var serveErr error
	select {
	case err := <-errc:
		serveErr = fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	a.draining.Store(true)
	a.eventWake.Stop() // long polls answer now, with what they have
	a.Log.Info("shutting down", "grace", ShutdownGrace.String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer cancel()
	for _, srv := range servers { // the main server first: scrapes may watch it drain
		if err := srv.Shutdown(sctx); err != nil {
			a.Log.Warn("in-flight requests did not finish in time", "err", err)
			_ = srv.Close()
		}
	}
	remaining := len(servers)
	if serveErr != nil {
		remaining--
	}
	for range remaining {
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) && serveErr == nil {
			serveErr = err
		}
	}
	return serveErr
}

// newServer is an http.Server with the connection limits of
// docs/api.md#responses-and-headers: headers within 10 s, bodies within BodyReadTimeout (set per
// request by httpmw.BodyDeadline), responses within writeTimeout, idle keep-alive
// connections closed after 2 minutes.
func (a *App) newServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(a.Log.Handler(), slog.LevelWarn),
	}
}

// startWorkers runs the background goroutines of this instance: scan
// writing, the cache invalidation listener and the priority governor in
// every role; the fold and River's workers in the worker role; the
// replica's health checks where reads may go to it.
func (a *App) startWorkers() {
	ctx, cancel := context.WithCancel(context.Background())
	a.stopWorkers = cancel
	a.workers.Go(a.Scans.Run)
	a.workers.Go(func() { a.Priority.Run(ctx) })
	a.workers.Go(func() { a.listener.Run(ctx) })
	a.workers.Go(func() { a.Database.Run(ctx) })
	if a.Config.Roles.Worker() {
		a.workers.Go(func() { a.Folder.Run(ctx) })
		a.workers.Go(func() { a.runJobs(ctx) })
	}
	if a.Replica != nil {
		a.workers.Go(func() { a.Replica.Run(ctx) })
	}
}

// changeEchoWait bounds how long a link change waits for its NOTIFY to
// come back (notify.Listener.Heard) before the API answers anyway.
const changeEchoWait = 100 * time.Millisecond

// DrainTimeout bounds how long a stop waits for the scan buffers to be
// written. It matters only during a database outage (normally they drain
// in milliseconds): it stays under the 30 s that orchestrators commonly
// grant between SIGTERM and SIGKILL, so the scans that could not be
// written are counted in the log rather than cut off silently.
const DrainTimeout = 20 * time.Second

// StopWorkers stops the background goroutines and waits for them: the scan
// buffer is drained into the database first and, in the worker role,
// folded into the analytics (so scan_count is exact after a graceful stop
// of a single instance; otherwise a worker folds them), then jobs and the
// listener stop.
// Call it after the HTTP server stopped accepting requests. Idempotent.
func (a *App) StopWorkers() {
	ctx, cancel := context.WithTimeout(context.Background(), DrainTimeout)
	defer cancel()
	if err := a.Scans.Close(ctx); err != nil {
		a.Log.Error("scan buffer not drained", "err", err)
	}
	// Scan limits: this instance's unused blocks go back for the others.
	if err := a.Redirects.Close(ctx); err != nil {
		a.Log.Warn("unused scan budget not given back; those scans of limited links are lost", "err", err)
	}
	if a.Config.Roles.Worker() {
		if _, err := a.Folder.Fold(ctx); err != nil {
			a.Log.Warn("final fold of scans failed; the next start folds them", "err", err)
		}
	}
	a.stopWorkers()
	a.workers.Wait()
	if a.closeRateLimiter != nil {
		a.closeRateLimiter()
	}
}

// Close releases the database: the pool, and the embedded cluster when this
// process started it.
func (a *App) Close(ctx context.Context) error {
	a.StopWorkers()
	if a.closeGeo != nil {
		_ = a.closeGeo()
	}
	for _, p := range a.ownPools {
		p.Close()
	}
	if a.cluster == nil {
		return nil // the caller owns the pool
	}
	a.Pool.Close()
	return a.cluster.Close(ctx)
}

// newSignIn builds single sign-on and the second factors, each secret
// under a key of its own derived from LINKQR_SECRET_KEY.
func (a *App) newSignIn() error {
	ssoBox, err := sealbox.New(config.DeriveKey(a.Config.SecretKey, "sso-client-secret"))
	if err != nil {
		return err
	}
	a.SSO = sso.New(sso.Options{DB: a.DB, Box: ssoBox, Resolver: domain.NewResolver(a.Config.DNSResolver),
		Log: a.Log, BaseURL: a.Config.BaseURL.String()})
	totpBox, err := sealbox.New(config.DeriveKey(a.Config.SecretKey, "totp-secret"))
	if err != nil {
		return err
	}
	a.TwoFactor, err = twofactor.New(twofactor.Options{DB: a.DB, Box: totpBox,
		CodeKey: config.DeriveKey(a.Config.SecretKey, "recovery-code"), BaseURL: a.Config.BaseURL.String()})
	return err
}
