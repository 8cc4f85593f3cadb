package domain_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// clock is a time source the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

func setup(t *testing.T) (*domain.Service, *testkit.DNSServer, *clock, *store.DB) {
	t.Helper()
	pool := testkit.DB(t)
	dnsSrv := testkit.StartDNS(t)
	clk := &clock{t: time.Now().UTC().Truncate(time.Second)}
	db := store.NewDB(pool)
	return domain.NewService(domain.Options{DB: db, Resolver: domain.NewResolver(dnsSrv.Addr), Now: clk.Now}, nil), dnsSrv, clk, db
}

func mustHost(t *testing.T, s string) hostname.Name {
	t.Helper()
	h, err := hostname.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestVerifyByTXTRecord(t *testing.T) {
	t.Parallel()
	svc, dnsSrv, _, db := setup(t)
	ctx := context.Background()
	ws := testkit.NewTenant(t, db.Pool()).WorkspaceID
	d, err := svc.Create(ctx, ws, mustHost(t, "go.acme.com"))
	if err != nil || d.Status != domain.StatusPending || !strings.HasPrefix(d.RecordValue(), "linkqr-verification=") {
		t.Fatalf("create: %+v %v", d, err)
	}

	var nv *domain.NotVerifiedError
	_, err = svc.Verify(ctx, ws, d.ID)
	if !errors.As(err, &nv) || nv.Found != "no TXT record at _linkqr.go.acme.com; create one with the value "+d.RecordValue() {
		t.Fatalf("no record: %v", err)
	}
	dnsSrv.SetTXT("_linkqr.go.acme.com", "v=spf1 -all", "linkqr-verification=wrong")
	after, err := svc.Verify(ctx, ws, d.ID)
	if !errors.As(err, &nv) || !strings.Contains(nv.Found, `found "v=spf1 -all", "linkqr-verification=wrong" at _linkqr.go.acme.com, expected "`+d.RecordValue()+`"`) {
		t.Fatalf("wrong record: %v", err)
	}
	if after.Status != domain.StatusPending || after.LastCheckError == nil || *after.LastCheckError != nv.Found {
		t.Errorf("after a failed check: %+v", after)
	}
	dnsSrv.SetTXT("_linkqr.go.acme.com", "unrelated", d.RecordValue())
	after, err = svc.Verify(ctx, ws, d.ID)
	if err != nil || after.Status != domain.StatusVerified || after.VerifiedAt == nil || after.LastCheckError != nil {
		t.Fatalf("right record: %+v %v", after, err)
	}
}

func TestTCPFallbackForLargeAnswers(t *testing.T) {
	t.Parallel()
	svc, dnsSrv, _, db := setup(t)
	ctx := context.Background()
	ws := testkit.NewTenant(t, db.Pool()).WorkspaceID
	d, err := svc.Create(ctx, ws, mustHost(t, "big.acme.com"))
	if err != nil {
		t.Fatal(err)
	}
	values := []string{}
	for range 40 { // ~8 KB: more than a 4096-byte datagram holds
		values = append(values, strings.Repeat("x", 200))
	}
	dnsSrv.SetTXT(domain.RecordName(d.Hostname), append(values, d.RecordValue())...)
	if after, err := svc.Verify(ctx, ws, d.ID); err != nil || !after.Verified() {
		t.Fatalf("verify through a truncated answer: %+v %v", after, err)
	}
}

func TestVerifiedHostnameBelongsToOneWorkspace(t *testing.T) {
	t.Parallel()
	svc, dnsSrv, _, db := setup(t)
	ctx := context.Background()
	a := testkit.NewTenant(t, db.Pool()).WorkspaceID
	b := testkit.NewTenant(t, db.Pool()).WorkspaceID
	da, err := svc.Create(ctx, a, mustHost(t, "go.acme.com"))
	if err != nil {
		t.Fatal(err)
	}
	db2, err := svc.Create(ctx, b, mustHost(t, "go.acme.com")) // both pending: allowed
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Create(ctx, a, mustHost(t, "GO.acme.com")); !errors.Is(err, domain.ErrExists) {
		t.Errorf("the same hostname twice in a workspace: %v", err)
	}
	dnsSrv.SetTXT("_linkqr.go.acme.com", da.RecordValue(), db2.RecordValue())
	if _, err := svc.Verify(ctx, a, da.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Verify(ctx, b, db2.ID); !errors.Is(err, domain.ErrTaken) {
		t.Errorf("verify in a second workspace: %v", err)
	}
	if got, _ := svc.Get(ctx, b, db2.ID); got.Status != domain.StatusPending || got.LastCheckError == nil || *got.LastCheckError != domain.ErrTaken.Error() {
		t.Errorf("the second workspace's domain: %+v", got)
	}
	c := testkit.NewTenant(t, db.Pool()).WorkspaceID
	if _, err := svc.Create(ctx, c, mustHost(t, "go.acme.com")); !errors.Is(err, domain.ErrTaken) {
		t.Errorf("add in a third workspace: %v", err)
	}
	if _, err := svc.Get(ctx, b, da.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("another workspace's domain: %v", err)
	}
}

func TestAtMostFiftyDomains(t *testing.T) {
	t.Parallel()
	svc, _, _, db := setup(t)
	ctx := context.Background()
	ws := testkit.NewTenant(t, db.Pool()).WorkspaceID
	var wg sync.WaitGroup
	errs := make(chan error, domain.MaxPerWorkspace+5)
	for i := range domain.MaxPerWorkspace + 5 { // concurrently: the limit holds under races
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.Create(ctx, ws, mustHost(t, "d"+strings.Repeat("x", i%3)+string(rune('a'+i%26))+"-"+string(rune('a'+i/26))+".example"))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	created, limited := 0, 0
	for err := range errs {
		switch {
		case err == nil:
			created++
		case errors.Is(err, domain.ErrLimit):
			limited++
		default:
			t.Errorf("create: %v", err)
		}
	}
	if created != domain.MaxPerWorkspace || limited != 5 {
		t.Errorf("created %d, refused %d", created, limited)
	}
}

func TestRecheckVerifiesAndNoticesMissingRecords(t *testing.T) {
	t.Parallel()
	svc, dnsSrv, clk, db := setup(t)
	ctx := context.Background()
	ws := testkit.NewTenant(t, db.Pool()).WorkspaceID
	d, err := svc.Create(ctx, ws, mustHost(t, "go.acme.com"))
	if err != nil {
		t.Fatal(err)
	}
	w := &domain.RecheckWorker{Service: svc}
	if err := w.Work(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := svc.Get(ctx, ws, d.ID); got.Status != domain.StatusPending || got.LastCheckedAt == nil {
		t.Fatalf("without a record: %+v", got)
	}

	dnsSrv.SetTXT(domain.RecordName(d.Hostname), d.RecordValue())
	if n, err := svc.Recheck(ctx, 10); err != nil || n != 0 {
		t.Fatalf("a domain just checked is not due: %d %v", n, err)
	}
	clk.Advance(domain.PendingAge + time.Second)
	if err := w.Work(ctx, nil); err != nil {
		t.Fatal(err)
	}
	got, _ := svc.Get(ctx, ws, d.ID)
	if !got.Verified() || got.RecordMissingSince != nil {
		t.Fatalf("once the record appeared: %+v", got)
	}

	dnsSrv.SetTXT(domain.RecordName(d.Hostname))
	clk.Advance(domain.PendingAge + time.Second)
	if n, _ := svc.Recheck(ctx, 10); n != 0 {
		t.Fatalf("a verified domain is re-checked hourly, not every %v", domain.PendingAge)
	}
	clk.Advance(domain.VerifiedAge)
	gone := clk.Now()
	if err := w.Work(ctx, nil); err != nil {
		t.Fatal(err)
	}
	got, _ = svc.Get(ctx, ws, d.ID)
	if !got.Verified() || got.RecordMissingSince == nil || !got.RecordMissingSince.Equal(gone) ||
		got.LastCheckError == nil || !strings.HasPrefix(*got.LastCheckError, "no TXT record at _linkqr.go.acme.com") {
		t.Fatalf("after the record disappeared (still verified, marked): %+v", got)
	}

	dnsSrv.SetTXT(domain.RecordName(d.Hostname), d.RecordValue())
	clk.Advance(domain.VerifiedAge + time.Second)
	if err := w.Work(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ = svc.Get(ctx, ws, d.ID); got.RecordMissingSince != nil || got.LastCheckError != nil {
		t.Errorf("once the record is back: %+v", got)
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	svc, dnsSrv, _, db := setup(t)
	ctx := context.Background()
	ws := testkit.NewTenant(t, db.Pool()).WorkspaceID
	other := testkit.NewTenant(t, db.Pool()).WorkspaceID
	d, err := svc.Create(ctx, ws, mustHost(t, "go.acme.com"))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, other, d.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("delete from another workspace: %v", err)
	}
	dnsSrv.SetTXT(domain.RecordName(d.Hostname), d.RecordValue())
	if _, err := svc.Verify(ctx, ws, d.ID); err != nil {
		t.Fatal(err)
	}
	links := link.NewService(db, link.Origins{ShortBase: "https://s.example"}, nil, nil)
	target, _ := link.ParseTargetURL("https://example.com/")
	var ids []uuid.UUID
	for range 2 {
		l, err := links.Create(ctx, ws, link.CreateInput{TargetURL: target, Domain: &d.Hostname})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	var inUse *domain.InUseError
	if err := svc.Delete(ctx, ws, d.ID); !errors.As(err, &inUse) || inUse.Links != 2 || inUse.Error() != "2 links use this domain; delete them or move them first" {
		t.Fatalf("delete while links use it: %v", err)
	}
	// Deleted links do not hold the domain (their codes stay taken on the
	// hostname: see the links tests).
	for _, id := range ids {
		if err := links.Delete(ctx, ws, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Delete(ctx, ws, d.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, ws, d.ID); !errors.Is(err, id.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
}

func TestUnreachableResolverIsReportedWithoutItsAddress(t *testing.T) {
	t.Parallel()
	pool := testkit.DB(t)
	db := store.NewDB(pool)
	// Port 1 on loopback: nothing listens, the query is refused at once.
	svc := domain.NewService(domain.Options{DB: db, Resolver: domain.NewResolver("127.0.0.1:1")}, nil)
	ctx := context.Background()
	ws := testkit.NewTenant(t, pool).WorkspaceID
	d, err := svc.Create(ctx, ws, mustHost(t, "go.acme.com"))
	if err != nil {
		t.Fatal(err)
	}
	var nv *domain.NotVerifiedError
	if _, err := svc.Verify(ctx, ws, d.ID); !errors.As(err, &nv) || nv.Found != "the DNS lookup of TXT _linkqr.go.acme.com failed: the DNS server did not answer" {
		t.Errorf("verify: %v", err)
	}
}
