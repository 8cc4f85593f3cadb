package domain

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/net/publicsuffix"

	"github.com/linkqr/linkqr/internal/certs"
	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/wire"
)

// Routing is what to point where: the records that send a domain's
// visitors to linkqr (LINKQR_CUSTOM_DOMAIN_TARGET).
type Routing struct {
	// Apex: the hostname is a registered domain itself (acme.com, by the
	// public suffix list), whose name cannot hold a CNAME record.
	Apex    bool
	Records []Record
}

// Record is one DNS record to create.
type Record struct{ Type, Name, Value string }

// Types of Routing's records.
const (
	RecordCNAME = "CNAME"
	RecordA     = "A"
	RecordAAAA  = "AAAA"
	// RecordALIAS is a DNS provider's CNAME at the apex: ALIAS, ANAME or
	// CNAME flattening, which the provider answers as A/AAAA records.
	RecordALIAS = "ALIAS"
)

// IsApex reports whether h is a registered domain (acme.com,
// acme.co.uk) rather than a name under one (go.acme.com).
func IsApex(h hostname.Name) bool {
	registered, err := publicsuffix.EffectiveTLDPlusOne(h.String())
	return err != nil || registered == h.String() // a public suffix itself holds no CNAME either
}

// RoutingOf says how h points at t: a subdomain is a CNAME to a hostname
// target, an apex an ALIAS (or flattened CNAME) to it; an address target
// takes an A or AAAA record per address.
func RoutingOf(h hostname.Name, t hostname.Target) Routing {
	r := Routing{Apex: IsApex(h)}
	if name, ok := t.Name(); ok {
		typ := RecordCNAME
		if r.Apex {
			typ = RecordALIAS
		}
		r.Records = []Record{{Type: typ, Name: h.String(), Value: name}}
		return r
	}
	for _, a := range t.Addrs() {
		typ := RecordA
		if a.Is6() {
			typ = RecordAAAA
		}
		r.Records = append(r.Records, Record{Type: typ, Name: h.String(), Value: a.String()})
	}
	return r
}

// CheckState is where one live check stands.
type CheckState string

// States of a check.
const (
	CheckOK            CheckState = "ok"
	CheckPending       CheckState = "pending"        // nothing wrong, something still to do or to happen
	CheckFailed        CheckState = "failed"         // something is wrong; Detail says what
	CheckNotApplicable CheckState = "not_applicable" // nothing of linkqr's to check
)

// Check is one live check of a domain.
type Check struct {
	State CheckState
	// CheckedAt is when it was made; zero while the first look at the
	// domain is still running.
	CheckedAt time.Time
	// Detail is a sentence for the person setting the domain up.
	Detail string
}

// Checks are a domain's live checks, made together.
type Checks struct {
	Verification Check // the TXT record that proves control
	Routing      Check // whether the name leads to linkqr
	Certificate  Check // the TLS certificate linkqr serves for it
	// TargetAddrs are what linkqr's own name (a hostname target) resolved
	// to: the A/AAAA values for an apex whose DNS provider has no ALIAS.
	TargetAddrs []netip.Addr
}

// Checked is a domain with what to point where and its live checks: what
// its page and the API's domain object show.
type Checked struct {
	Domain
	Routing Routing
	Checks  Checks
}

// Wire is the API's domain object (the Domain schema of internal/api/openapi.yaml).
func (c Checked) Wire() wire.Domain {
	d := c.Domain
	out := wire.Domain{
		Object: "domain", ID: wire.DomainID(d.ID), WorkspaceID: wire.WorkspaceID(d.WorkspaceID),
		Hostname: d.Hostname.String(), Status: d.Status,
		Verification: wire.DomainVerification{Type: "TXT", Name: RecordName(d.Hostname), Value: d.RecordValue()},
		RootURL:      d.RootURL, NotFoundURL: d.NotFoundURL, VerifiedAt: wire.TimePtr(d.VerifiedAt),
		Routing: wire.DomainRouting{Apex: c.Routing.Apex, Records: make([]wire.DomainRecord, len(c.Routing.Records))},
		Checks: wire.DomainChecks{
			Verification: c.Checks.Verification.wire(), Routing: c.Checks.Routing.wire(), Certificate: c.Checks.Certificate.wire(),
		},
		CreatedAt: wire.Time(d.CreatedAt), UpdatedAt: wire.Time(d.UpdatedAt),
	}
	for i, r := range c.Routing.Records {
		out.Routing.Records[i] = wire.DomainRecord{Type: r.Type, Name: r.Name, Value: r.Value}
	}
	return out
}

func (c Check) wire() wire.DomainCheck {
	out := wire.DomainCheck{State: string(c.State), Detail: c.Detail}
	if !c.CheckedAt.IsZero() {
		out.CheckedAt = wire.TimePtr(&c.CheckedAt)
	}
	return out
}

// How live checks are paced. A domain's checks are kept for CheckTTL, so
// reloading its page or polling the API costs no lookup; "Check again"
// looks afresh at most every CheckMinInterval; one domain's lookups
// together get CheckTimeout, and a page or an API answer waits for them
// at most checkWait, showing what it has (the previous checks, or "still
// looking") while they finish for the next look.
const (
	CheckTTL         = time.Minute
	CheckMinInterval = 10 * time.Second
	CheckTimeout     = 3 * time.Second
	checkWait        = CheckTimeout + 250*time.Millisecond
	// checkParallel domains are looked at at once by one process: a
	// workspace's 50 domains, unchecked, take a few rounds.
	checkParallel = 16
)

// timeLayout is how a check's sentence writes a moment.
const timeLayout = "2 Jan 2006, 15:04 UTC"

// Certificates tells a hostname's certificate state: the certificates of
// the TLS listener (certs.Cache) when linkqr terminates TLS itself.
type Certificates interface {
	Status(ctx context.Context, host string, now time.Time) (certs.Status, error)
}

// Check returns d with its routing and its live checks: the kept ones
// while younger than CheckTTL, else looked up now. fresh ("Check again")
// looks again unless the kept ones are younger than CheckMinInterval.
// It waits for lookups at most about CheckTimeout.
func (s *Service) Check(ctx context.Context, d Domain, fresh bool) Checked {
	run := s.live.start(s, d, fresh)
	ctx, cancel := context.WithTimeout(ctx, checkWait)
	defer cancel()
	return s.checked(d, s.live.wait(ctx, run, s.certs == nil))
}

// CheckAll is Check of each of ds, looked up together under one wait.
func (s *Service) CheckAll(ctx context.Context, ds []Domain) []Checked {
	runs := make([]*checkRun, len(ds))
	for i, d := range ds {
		runs[i] = s.live.start(s, d, false)
	}
	ctx, cancel := context.WithTimeout(ctx, checkWait)
	defer cancel()
	out := make([]Checked, len(ds))
	for i, d := range ds {
		out[i] = s.checked(d, s.live.wait(ctx, runs[i], s.certs == nil))
	}
	return out
}

// Target is where custom domains point (LINKQR_CUSTOM_DOMAIN_TARGET).
func (s *Service) Target() hostname.Target { return s.target }

func (s *Service) checked(d Domain, c Checks) Checked {
	return Checked{Domain: d, Routing: RoutingOf(d.Hostname, s.target), Checks: c}
}

// liveChecks keeps each domain's last checks (by ID: a domain's hostname
// never changes) and the lookups under way, one per domain at a time.
type liveChecks struct {
	mu     sync.Mutex
	runs   map[uuid.UUID]*checkRun
	swept  time.Time
	slots  chan struct{}
	target targetLookup
}

// checkRun is one look at a domain. Its fields are written before done
// closes and only read after.
type checkRun struct {
	done   chan struct{}
	checks Checks
	at     time.Time
	// prev are the checks this run replaces, shown while it runs.
	prev *Checks
}

func newLiveChecks() *liveChecks {
	return &liveChecks{runs: map[uuid.UUID]*checkRun{}, slots: make(chan struct{}, checkParallel)}
}

func (r *checkRun) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// start returns the run whose checks answer for d: the one under way, the
// kept one, or a new one.
func (l *liveChecks) start(s *Service, d Domain, fresh bool) *checkRun {
	now := s.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.runs[d.ID]
	if old != nil {
		if !old.finished() {
			return old
		}
		if age := now.Sub(old.at); age < CheckTTL && (!fresh || age < CheckMinInterval) {
			return old
		}
	}
	run := &checkRun{done: make(chan struct{})}
	if old != nil {
		prev := old.checks
		run.prev = &prev
	}
	l.runs[d.ID] = run
	l.sweep(now)
	go func() {
		defer close(run.done)
		l.slots <- struct{}{}
		defer func() { <-l.slots }()
		// Not the request's context: the lookups finish for the next
		// look even when nobody waits, and a request's transaction is
		// not theirs.
		ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
		defer cancel()
		run.checks = s.look(ctx, d)
		run.at = run.checks.Verification.CheckedAt
	}()
	return run
}

// sweep drops checks older than CheckTTL, once a CheckTTL at most.
func (l *liveChecks) sweep(now time.Time) {
	if now.Sub(l.swept) < CheckTTL {
		return
	}
	l.swept = now
	for id, r := range l.runs {
		if r.finished() && now.Sub(r.at) >= CheckTTL {
			delete(l.runs, id)
		}
	}
}

// forget drops what is kept of a domain: its record was just looked at
// (Verify), or it is gone.
func (l *liveChecks) forget(id uuid.UUID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.runs, id)
}

// wait returns run's checks, or when ctx ends first the checks it
// replaces, or "still looking".
func (l *liveChecks) wait(ctx context.Context, run *checkRun, noCertificates bool) Checks {
	select {
	case <-run.done:
		return run.checks
	case <-ctx.Done():
	}
	if run.finished() {
		return run.checks
	}
	if run.prev != nil {
		return *run.prev
	}
	looking := Check{State: CheckPending, Detail: "linkqr is still looking this up; look again in a few seconds."}
	c := Checks{Verification: looking, Routing: looking, Certificate: looking}
	if noCertificates {
		c.Certificate = notTerminated(time.Time{})
	}
	return c
}

// targetLookup keeps the addresses of a hostname target for CheckTTL:
// every domain's routing check compares with them.
type targetLookup struct {
	mu    sync.Mutex
	at    time.Time
	addrs []netip.Addr
	err   error
}

func (t *targetLookup) lookup(ctx context.Context, s *Service, name string) ([]netip.Addr, error) {
	now := s.now()
	t.mu.Lock()
	if !t.at.IsZero() && now.Sub(t.at) < CheckTTL {
		defer t.mu.Unlock()
		return t.addrs, t.err
	}
	t.mu.Unlock()
	h, err := s.resolver.LookupHost(ctx, name)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.at, t.addrs, t.err = now, h.Addrs, err
	return h.Addrs, err
}

// look makes d's checks now, its lookups at once.
func (s *Service) look(ctx context.Context, d Domain) Checks {
	var (
		wg                 sync.WaitGroup
		txt                []string
		txtErr, hostErr    error
		host               Host
		targetAddrs        = s.target.Addrs()
		targetErr          error
		certificate        Check
		targetName, byName = s.target.Name()
	)
	wg.Go(func() { txt, txtErr = s.resolver.LookupTXT(ctx, RecordName(d.Hostname)) })
	wg.Go(func() { host, hostErr = s.resolver.LookupHost(ctx, d.Hostname.String()) })
	if byName {
		wg.Go(func() { targetAddrs, targetErr = s.live.target.lookup(ctx, s, targetName) })
	}
	wg.Go(func() { certificate = s.certificateCheck(ctx, d) })
	wg.Wait()
	now := s.now().UTC()
	c := Checks{
		Verification: verificationCheck(d, txt, txtErr),
		Routing:      routingCheck(d.Hostname, s.target, host, hostErr, targetAddrs, targetErr),
		Certificate:  certificate,
	}
	if byName {
		c.TargetAddrs = targetAddrs
	}
	c.Verification.CheckedAt, c.Routing.CheckedAt, c.Certificate.CheckedAt = now, now, now
	return c
}

// verificationCheck says what the TXT record that proves control holds.
func verificationCheck(d Domain, values []string, err error) Check {
	name, want := RecordName(d.Hostname), d.RecordValue()
	found := slices.ContainsFunc(values, func(v string) bool { return strings.TrimSpace(v) == want })
	switch {
	case err != nil:
		return Check{State: CheckFailed, Detail: fmt.Sprintf("The DNS lookup of TXT %s failed: %s.", name, err)}
	case found && d.Verified():
		return Check{State: CheckOK, Detail: fmt.Sprintf("The TXT record at %s holds this domain's token.", name)}
	case found:
		return Check{State: CheckOK, Detail: fmt.Sprintf("The TXT record at %s holds this domain's token: verifying now, or the automatic check within %d minutes, verifies the domain.", name, int(PendingAge.Minutes()))}
	case len(values) == 0 && d.Verified():
		return Check{State: CheckFailed, Detail: fmt.Sprintf("There is no TXT record at %s any more. The domain keeps working, but create the record again with the value %s.", name, want)}
	case len(values) == 0:
		return Check{State: CheckPending, Detail: fmt.Sprintf("No TXT record at %s yet: create one with the value %s.", name, want)}
	}
	return Check{State: CheckFailed, Detail: fmt.Sprintf("Found %s at %s, expected %q.", shownValues(values), name, want)}
}

// routingCheck says whether h leads to the target: a CNAME chain through
// a hostname target, or addresses that are all the target's (so a
// provider's flattening counts, and a chain the resolver does not show).
func routingCheck(h hostname.Name, t hostname.Target, host Host, hostErr error, targetAddrs []netip.Addr, targetErr error) Check {
	hn := h.String()
	targetName, byName := t.Name()
	linkqr := joinAddrs(targetAddrs)
	if byName {
		linkqr = targetName
		if len(targetAddrs) > 0 {
			linkqr += " (" + joinAddrs(targetAddrs) + ")"
		}
	}
	if hostErr != nil {
		return Check{State: CheckFailed, Detail: fmt.Sprintf("The DNS lookup of %s failed: %s.", hn, hostErr)}
	}
	if byName && slices.Contains(host.CNAMEs, targetName) {
		if host.CNAMEs[0] == targetName {
			return Check{State: CheckOK, Detail: fmt.Sprintf("%s is a CNAME to %s.", hn, targetName)}
		}
		return Check{State: CheckOK, Detail: fmt.Sprintf("%s leads to %s through the CNAME chain %s.", hn, targetName, strings.Join(host.CNAMEs, " → "))}
	}
	if len(host.CNAMEs) == 0 && len(host.Addrs) == 0 {
		return Check{State: CheckPending, Detail: fmt.Sprintf("%s has no CNAME, A or AAAA record yet.", hn)}
	}
	now := hn + " points at "
	if n := len(host.CNAMEs); n > 0 {
		if len(host.Addrs) == 0 {
			return Check{State: CheckFailed, Detail: fmt.Sprintf("%s is a CNAME to %s, which has no address: point %s at %s.", hn, host.CNAMEs[n-1], hn, linkqr)}
		}
		now = fmt.Sprintf("%s is a CNAME to %s, which points at ", hn, host.CNAMEs[n-1])
	}
	if byName && targetErr != nil && len(targetAddrs) == 0 {
		return Check{State: CheckFailed, Detail: fmt.Sprintf("%s%s; linkqr's own name %s could not be looked up to compare: %s.", now, joinAddrs(host.Addrs), targetName, targetErr)}
	}
	var stray []netip.Addr
	for _, a := range host.Addrs {
		if !slices.Contains(targetAddrs, a) {
			stray = append(stray, a)
		}
	}
	switch {
	case len(stray) == 0:
		return Check{State: CheckOK, Detail: fmt.Sprintf("%s%s, linkqr's address%s.", now, joinAddrs(host.Addrs), plural(len(host.Addrs), "", "es"))}
	case len(stray) == len(host.Addrs):
		return Check{State: CheckFailed, Detail: fmt.Sprintf("%s%s, not at linkqr: point %s at %s.", now, joinAddrs(host.Addrs), hn, linkqr)}
	}
	return Check{State: CheckFailed, Detail: fmt.Sprintf("%s%s; %s %s not linkqr's, so remove %s. linkqr is %s.", now, joinAddrs(host.Addrs),
		joinAddrs(stray), plural(len(stray), "is", "are"), plural(len(stray), "it", "them"), linkqr)}
}

// certificateCheck says where the certificate for d stands, from what
// internal/certs shares; it orders nothing.
func (s *Service) certificateCheck(ctx context.Context, d Domain) Check {
	now := s.now().UTC()
	if s.certs == nil {
		return notTerminated(now)
	}
	st, err := s.certs.Status(ctx, d.Hostname.String(), now)
	if err != nil {
		return Check{State: CheckFailed, Detail: "linkqr could not read the certificate's state just now; check again in a moment."}
	}
	return certificateCheck(d, st)
}

// notTerminated is the certificate check when a proxy terminates TLS.
func notTerminated(at time.Time) Check {
	return Check{State: CheckNotApplicable, CheckedAt: at, Detail: "Not applicable: TLS is terminated by the proxy in front of linkqr, which holds the certificate."}
}

// certificateCheck turns a certificate's state into d's check.
func certificateCheck(d Domain, st certs.Status) Check {
	hn := d.Hostname.String()
	switch st.State {
	case certs.StateValid:
		detail := "Valid until " + st.NotAfter.UTC().Format(timeLayout)
		if st.Issuer != "" {
			detail += ", issued by " + st.Issuer
		}
		return Check{State: CheckOK, Detail: detail + "."}
	case certs.StateObtaining:
		return Check{State: CheckPending, Detail: "Being obtained from the certificate authority since " + st.At.UTC().Format(timeLayout) + "."}
	case certs.StateFailed:
		return Check{State: CheckFailed, Detail: fmt.Sprintf("The last attempt, on %s, failed: %s. The next HTTPS visit to %s, a minute later at the earliest, tries again.",
			st.At.UTC().Format(timeLayout), strings.TrimSuffix(st.Reason, "."), hn)}
	case certs.StateExpired:
		return Check{State: CheckFailed, Detail: fmt.Sprintf("Expired on %s; the next HTTPS visit to %s obtains a new one.", st.NotAfter.UTC().Format(timeLayout), hn)}
	}
	if d.Verified() {
		return Check{State: CheckPending, Detail: fmt.Sprintf("None yet: the first HTTPS visit to https://%s obtains one, in a few seconds.", hn)}
	}
	return Check{State: CheckPending, Detail: "None yet: once the domain is verified and points at linkqr, its first HTTPS visit obtains one."}
}

// shownValues quotes TXT values for a sentence, bounded (maxShownValues,
// maxShownBytes) so a zone with many or huge values makes no huge one.
func shownValues(values []string) string {
	shown := make([]string, 0, maxShownValues)
	for i, v := range values {
		if i == maxShownValues {
			shown = append(shown, fmt.Sprintf("and %d more", len(values)-i))
			break
		}
		if len(v) > maxShownBytes {
			v = v[:maxShownBytes] + "…"
		}
		shown = append(shown, fmt.Sprintf("%q", v))
	}
	return strings.Join(shown, ", ")
}

func joinAddrs(addrs []netip.Addr) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
