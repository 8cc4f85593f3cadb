package domain_test

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// linkqrAddr is where the test's linkqr lives: links.linkqr.test resolves
// to it on the test's DNS server.
var linkqrAddr = netip.MustParseAddr("192.0.2.10")

// checksSetup is a service pointing custom domains at links.linkqr.test
// (or at target), with the DNS server answering for it.
func checksSetup(t *testing.T, target string) (*domain.Service, *testkit.DNSServer, *clock, uuid.UUID) {
	t.Helper()
	pool := testkit.DB(t)
	dnsSrv := testkit.StartDNS(t)
	dnsSrv.SetA("links.linkqr.test", linkqrAddr)
	dnsSrv.SetAAAA("links.linkqr.test", netip.MustParseAddr("2001:db8::10"))
	tgt, err := hostname.ParseTarget(target)
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now().UTC().Truncate(time.Second)}
	svc := domain.NewService(domain.Options{DB: store.NewDB(pool), Resolver: domain.NewResolver(dnsSrv.Addr), Target: tgt, Now: clk.Now}, nil)
	return svc, dnsSrv, clk, testkit.NewTenant(t, pool).WorkspaceID
}

func mustCreate(t *testing.T, svc *domain.Service, ws uuid.UUID, host string) domain.Domain {
	t.Helper()
	d, err := svc.Create(context.Background(), ws, mustHost(t, host))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRoutingCheck: the in-test DNS server answers for domains in every
// state of the routing check: a CNAME to the target (directly or through
// a chain), an apex flattened to the target's addresses, no record yet,
// another target (the sentence says where it points now), a mix, and a
// CNAME to a name without addresses.
func TestRoutingCheck(t *testing.T) {
	t.Parallel()
	svc, dnsSrv, clk, ws := checksSetup(t, "links.linkqr.test")
	ctx := context.Background()
	dnsSrv.SetCNAME("go.acme-shop.com", "links.linkqr.test")
	dnsSrv.SetCNAME("chain.acme-shop.com", "go.acme-shop.com")
	dnsSrv.SetA("acme-shop.com", linkqrAddr) // an apex, flattened by its provider
	dnsSrv.SetA("wrong.acme-shop.com", netip.MustParseAddr("203.0.113.9"))
	dnsSrv.SetCNAME("old.acme-shop.com", "edge.other-host.example")
	dnsSrv.SetA("edge.other-host.example", netip.MustParseAddr("198.51.100.7"))
	dnsSrv.SetCNAME("dangling.acme-shop.com", "gone.other-host.example")
	dnsSrv.SetA("mixed.acme-shop.com", linkqrAddr)
	dnsSrv.SetAAAA("mixed.acme-shop.com", netip.MustParseAddr("2001:db8::99"))

	for _, tc := range []struct {
		host   string
		state  domain.CheckState
		detail string
	}{
		{"go.acme-shop.com", domain.CheckOK, "go.acme-shop.com is a CNAME to links.linkqr.test."},
		{"chain.acme-shop.com", domain.CheckOK, "chain.acme-shop.com leads to links.linkqr.test through the CNAME chain go.acme-shop.com → links.linkqr.test."},
		{"acme-shop.com", domain.CheckOK, "acme-shop.com points at 192.0.2.10, linkqr's address."},
		{"pending.acme-shop.com", domain.CheckPending, "pending.acme-shop.com has no CNAME, A or AAAA record yet."},
		{"wrong.acme-shop.com", domain.CheckFailed, "wrong.acme-shop.com points at 203.0.113.9, not at linkqr: point wrong.acme-shop.com at links.linkqr.test (192.0.2.10, 2001:db8::10)."},
		{"old.acme-shop.com", domain.CheckFailed, "old.acme-shop.com is a CNAME to edge.other-host.example, which points at 198.51.100.7, not at linkqr: point old.acme-shop.com at links.linkqr.test (192.0.2.10, 2001:db8::10)."},
		{"dangling.acme-shop.com", domain.CheckFailed, "dangling.acme-shop.com is a CNAME to gone.other-host.example, which has no address: point dangling.acme-shop.com at links.linkqr.test (192.0.2.10, 2001:db8::10)."},
		{"mixed.acme-shop.com", domain.CheckFailed, "mixed.acme-shop.com points at 192.0.2.10, 2001:db8::99; 2001:db8::99 is not linkqr's, so remove it. linkqr is links.linkqr.test (192.0.2.10, 2001:db8::10)."},
	} {
		d := mustCreate(t, svc, ws, tc.host)
		c := svc.Check(ctx, d, false)
		if got := c.Checks.Routing; got.State != tc.state || got.Detail != tc.detail || !got.CheckedAt.Equal(clk.Now()) {
			t.Errorf("%s: %s %q at %v\nwant %s %q", tc.host, got.State, got.Detail, got.CheckedAt, tc.state, tc.detail)
		}
		if got := c.Checks.Certificate; got.State != domain.CheckNotApplicable || !strings.HasPrefix(got.Detail, "Not applicable: TLS is terminated by the proxy") {
			t.Errorf("%s: certificate %+v without certificates of linkqr's own", tc.host, got)
		}
	}
	// What to point where: a CNAME for a subdomain, an ALIAS for an apex.
	for host, want := range map[string]string{"go.acme-shop.com": "false CNAME go.acme-shop.com links.linkqr.test", "acme-shop.com": "true ALIAS acme-shop.com links.linkqr.test"} {
		r := domain.RoutingOf(mustHost(t, host), svc.Target())
		if got := strings.TrimSpace(strings.Join([]string{boolString(r.Apex), r.Records[0].Type, r.Records[0].Name, r.Records[0].Value}, " ")); len(r.Records) != 1 || got != want {
			t.Errorf("%s: routing %+v", host, r)
		}
	}
	apex := svc.Check(ctx, mustCreate(t, svc, ws, "other-shop.co.uk"), false)
	if !apex.Routing.Apex || len(apex.Checks.TargetAddrs) != 2 || apex.Checks.TargetAddrs[0] != linkqrAddr {
		t.Errorf("an apex under a two-label suffix: %+v, target addresses %v", apex.Routing, apex.Checks.TargetAddrs)
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestRoutingCheckAgainstAddresses: with addresses as the target, every
// domain gets A/AAAA records, and a name resolving to them (however it
// gets there) points at linkqr.
func TestRoutingCheckAgainstAddresses(t *testing.T) {
	t.Parallel()
	svc, dnsSrv, _, ws := checksSetup(t, "2001:db8::10, 192.0.2.10")
	ctx := context.Background()
	dnsSrv.SetCNAME("go.acme-shop.com", "links.linkqr.test")
	d := mustCreate(t, svc, ws, "go.acme-shop.com")
	c := svc.Check(ctx, d, false)
	if got := c.Checks.Routing; got.State != domain.CheckOK || got.Detail != "go.acme-shop.com is a CNAME to links.linkqr.test, which points at 192.0.2.10, 2001:db8::10, linkqr's addresses." {
		t.Errorf("routing %+v", got)
	}
	var recs []string
	for _, r := range c.Routing.Records {
		recs = append(recs, r.Type+" "+r.Name+" "+r.Value)
	}
	if strings.Join(recs, "|") != "A go.acme-shop.com 192.0.2.10|AAAA go.acme-shop.com 2001:db8::10" || c.Routing.Apex {
		t.Errorf("records %v (apex %v)", recs, c.Routing.Apex)
	}
	dnsSrv.SetA("elsewhere.acme-shop.com", netip.MustParseAddr("203.0.113.9"))
	if got := svc.Check(ctx, mustCreate(t, svc, ws, "elsewhere.acme-shop.com"), false).Checks.Routing; got.State != domain.CheckFailed ||
		got.Detail != "elsewhere.acme-shop.com points at 203.0.113.9, not at linkqr: point elsewhere.acme-shop.com at 192.0.2.10, 2001:db8::10." {
		t.Errorf("elsewhere: %+v", got)
	}
}

// TestVerificationCheck: the TXT record's live states, for a pending and
// a verified domain.
func TestVerificationCheck(t *testing.T) {
	t.Parallel()
	svc, dnsSrv, clk, ws := checksSetup(t, "links.linkqr.test")
	ctx := context.Background()
	d := mustCreate(t, svc, ws, "go.acme-shop.com")
	name, want := domain.RecordName(d.Hostname), d.RecordValue()
	look := func() domain.Check {
		t.Helper()
		clk.Advance(domain.CheckTTL) // past what is kept
		return svc.Check(ctx, d, false).Checks.Verification
	}
	if got := look(); got.State != domain.CheckPending || got.Detail != "No TXT record at "+name+" yet: create one with the value "+want+"." {
		t.Errorf("no record: %+v", got)
	}
	dnsSrv.SetTXT(name, "linkqr-verification=old")
	if got := look(); got.State != domain.CheckFailed || got.Detail != `Found "linkqr-verification=old" at `+name+`, expected "`+want+`".` {
		t.Errorf("another value: %+v", got)
	}
	dnsSrv.SetTXT(name, want)
	if got := look(); got.State != domain.CheckOK || !strings.Contains(got.Detail, "verifying now, or the automatic check within 5 minutes, verifies the domain") {
		t.Errorf("the token, pending: %+v", got)
	}
	var err error
	if d, err = svc.Verify(ctx, ws, d.ID); err != nil {
		t.Fatal(err)
	}
	if got := look(); got.State != domain.CheckOK || got.Detail != "The TXT record at "+name+" holds this domain's token." {
		t.Errorf("the token, verified: %+v", got)
	}
	dnsSrv.SetTXT(name)
	if got := look(); got.State != domain.CheckFailed || !strings.HasPrefix(got.Detail, "There is no TXT record at "+name+" any more. The domain keeps working") {
		t.Errorf("the record gone from a verified domain: %+v", got)
	}
}

// TestChecksAreKept: a domain's checks are looked up once a CheckTTL;
// "Check again" looks afresh, but not twice within CheckMinInterval;
// Verify makes the next look fresh; another workspace's domain cannot be
// reached to check it.
func TestChecksAreKept(t *testing.T) {
	t.Parallel()
	svc, dnsSrv, clk, ws := checksSetup(t, "links.linkqr.test")
	ctx := context.Background()
	d := mustCreate(t, svc, ws, "go.acme-shop.com")
	routing := func(fresh bool) domain.Check { t.Helper(); return svc.Check(ctx, d, fresh).Checks.Routing }
	first := routing(false)
	if first.State != domain.CheckPending {
		t.Fatalf("first look: %+v", first)
	}
	dnsSrv.SetCNAME("go.acme-shop.com", "links.linkqr.test")
	clk.Advance(domain.CheckMinInterval - time.Second)
	if got := routing(false); got != first {
		t.Errorf("within CheckTTL the kept checks answer: %+v", got)
	}
	if got := routing(true); got != first {
		t.Errorf("Check again within CheckMinInterval looked again: %+v", got)
	}
	clk.Advance(time.Second)
	if got := routing(true); got.State != domain.CheckOK || !got.CheckedAt.Equal(clk.Now()) {
		t.Errorf("Check again after CheckMinInterval: %+v", got)
	}
	dnsSrv.SetCNAME("go.acme-shop.com", "")
	if got := routing(false); got.State != domain.CheckOK {
		t.Errorf("kept: %+v", got)
	}
	clk.Advance(domain.CheckTTL)
	if got := routing(false); got.State != domain.CheckPending {
		t.Errorf("after CheckTTL: %+v", got)
	}
	dnsSrv.SetCNAME("go.acme-shop.com", "links.linkqr.test")
	dnsSrv.SetTXT(domain.RecordName(d.Hostname), d.RecordValue())
	after, err := svc.Verify(ctx, ws, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	c := svc.Check(ctx, after, false)
	if c.Checks.Routing.State != domain.CheckOK || c.Checks.Verification.State != domain.CheckOK {
		t.Errorf("after Verify, without waiting for CheckTTL: %+v", c.Checks)
	}
	all := svc.CheckAll(ctx, []domain.Domain{after, mustCreate(t, svc, ws, "new.acme-shop.com")})
	if len(all) != 2 || all[0].Checks.Routing.State != domain.CheckOK || all[1].Checks.Routing.State != domain.CheckPending {
		t.Errorf("CheckAll: %+v", all)
	}
}

// TestSlowResolverDoesNotHoldThePage: against a DNS server that never
// answers, a look that may not wait shows "still looking" at once, and
// the lookups, bounded by CheckTimeout, end as failures kept for the next
// look.
func TestSlowResolverDoesNotHoldThePage(t *testing.T) {
	t.Parallel()
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = silent.Close() })
	pool := testkit.DB(t)
	svc := domain.NewService(domain.Options{
		DB: store.NewDB(pool), Resolver: domain.NewResolver(silent.LocalAddr().String()), Target: hostname.TargetOf("links.linkqr.test"),
	}, nil)
	ws := testkit.NewTenant(t, pool).WorkspaceID
	d := mustCreate(t, svc, ws, "go.acme-shop.com")
	gone, cancel := context.WithCancel(context.Background())
	cancel() // a visitor who does not wait at all
	c := svc.Check(gone, d, false)
	for _, ch := range []domain.Check{c.Checks.Verification, c.Checks.Routing} {
		if ch.State != domain.CheckPending || !ch.CheckedAt.IsZero() || ch.Detail != "linkqr is still looking this up; look again in a few seconds." {
			t.Errorf("while the lookups run: %+v", ch)
		}
	}
	if c.Checks.Certificate.State != domain.CheckNotApplicable {
		t.Errorf("certificate while looking: %+v", c.Checks.Certificate)
	}
	wait.Until(t, 3*domain.CheckTimeout, func() (bool, string) {
		c = svc.Check(gone, d, false)
		return !c.Checks.Routing.CheckedAt.IsZero(), c.Checks.Routing.Detail
	})
	if got := c.Checks.Routing; got.State != domain.CheckFailed || got.Detail != "The DNS lookup of go.acme-shop.com failed: the DNS server did not answer." {
		t.Errorf("routing against a silent server: %+v", got)
	}
	if got := c.Checks.Verification; got.State != domain.CheckFailed || got.Detail != "The DNS lookup of TXT _linkqr.go.acme-shop.com failed: the DNS server did not answer." {
		t.Errorf("verification against a silent server: %+v", got)
	}
}
