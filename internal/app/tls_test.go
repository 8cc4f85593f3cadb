package app_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/linkqr/linkqr/internal/app"
	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/testkit"
)

// tlsRig is what an on-demand TLS test runs on: a DNS server pointing the
// test hostnames at 127.0.0.1, Pebble as the ACME CA validating through
// it, and one database for the linkqr instances.
type tlsRig struct {
	dns    *testkit.DNSServer
	pebble *testkit.Pebble
	pool   *pgxpool.Pool
	secret string // LINKQR_SECRET_KEY: instances of one deployment share it
	ws     uuid.UUID
}

// newTLSRig starts Pebble validating HTTP-01 at httpAddr's port and
// TLS-ALPN-01 at tlsAddr's.
func newTLSRig(t *testing.T, httpAddr, tlsAddr string) *tlsRig {
	t.Helper()
	r := &tlsRig{dns: testkit.StartDNS(t), pool: testkit.DB(t), secret: testkit.NewSecretKey()}
	r.pebble = testkit.StartPebble(t, testkit.PebbleOptions{DNS: r.dns.Addr, HTTPPort: port(t, httpAddr), TLSPort: port(t, tlsAddr)})
	r.ws = testkit.NewTenant(t, r.pool).WorkspaceID
	return r
}

// serve starts an instance with its main listener on addr and its TLS
// listener on tlsAddr, and waits until the TLS listener is bound.
func (r *tlsRig) serve(t *testing.T, addr, tlsAddr string) *served {
	t.Helper()
	s := serveAppOn(t, r.pool, nil,
		"LINKQR_ADDR", addr, "LINKQR_TLS_ADDR", tlsAddr,
		"LINKQR_ACME_DIRECTORY", r.pebble.Directory, "LINKQR_ACME_CA_ROOTS", r.pebble.CAFile,
		"LINKQR_DNS_RESOLVER", r.dns.Addr, "LINKQR_SECRET_KEY", r.secret)
	eventually(t, 10*time.Second, "the TLS listener is bound", func() bool { return s.App.TLSListenAddr() != nil })
	return s
}

// domain adds host to the workspace, verified by its TXT record or left
// pending, and points it at 127.0.0.1 for the CA.
func (r *tlsRig) domain(t *testing.T, a *app.App, host string, verify bool) {
	t.Helper()
	ctx := context.Background()
	h, err := hostname.Parse(host)
	if err != nil {
		t.Fatal(err)
	}
	d, err := a.Domains.Create(ctx, r.ws, h)
	if err != nil {
		t.Fatal(err)
	}
	r.dns.SetA(host, netip.MustParseAddr("127.0.0.1"))
	if !verify {
		return
	}
	r.dns.SetTXT(domain.RecordName(h), d.RecordValue())
	if d, err = a.Domains.Verify(ctx, r.ws, d.ID); err != nil || !d.Verified() {
		t.Fatalf("verify %s: %+v %v", host, d, err)
	}
}

// certificates is an instance's linkqr_tls_certificates_total{outcome}.
func certificates(s *served, outcome string) int {
	return int(testutil.ToFloat64(s.App.Certs.Certificates.WithLabelValues(outcome)))
}

// cachedRows counts what the instances keep in acme_cache under name.
func cachedRows(t *testing.T, pool *pgxpool.Pool, name string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM acme_cache WHERE name = $1`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// httpsGet requests https://host+path from the TLS listener at addr,
// trusting only roots, and returns the response and the server's leaf
// certificate.
func httpsGet(t *testing.T, addr, host, path string, roots *x509.CertPool) (*http.Response, *x509.Certificate) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
	resp, err := client.Get("https://" + host + path)
	if err != nil {
		t.Fatalf("GET https://%s%s at %s: %v", host, path, addr, err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp, resp.TLS.PeerCertificates[0]
}

// handshake is a bare TLS handshake for name at addr that trusts any
// certificate: if it fails, the server gave none.
func handshake(addr, name string) error {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Minute}, "tcp", addr, &tls.Config{ServerName: name, InsecureSkipVerify: true})
	if err == nil {
		_ = conn.Close()
	}
	return err
}

func port(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(p)
	if err != nil || perr != nil {
		t.Fatalf("port of %q: %v %v", addr, err, perr)
	}
	return n
}

// TestTLSOnDemand: a handshake for a verified domain gets a certificate
// from the ACME CA (TLS-ALPN-01 on the TLS listener) chained to its root,
// and the request is served over it; a second instance on the same
// database serves the same certificate without ordering one; a pending or
// unknown name gets no certificate.
func TestTLSOnDemand(t *testing.T) {
	t.Parallel()
	httpAddr, tlsAddr := testkit.FreeAddr(t), testkit.FreeAddr(t)
	rig := newTLSRig(t, httpAddr, tlsAddr)
	first := rig.serve(t, httpAddr, tlsAddr)
	rig.domain(t, first.App, "go.acme-shop.com", true)
	rig.domain(t, first.App, "pending.acme-shop.com", false)
	rig.dns.SetA("unknown.acme-shop.com", netip.MustParseAddr("127.0.0.1")) // the CA could validate it: only linkqr refuses
	roots := rig.pebble.Roots(t)

	resp, leaf := httpsGet(t, tlsAddr, "GO.acme-shop.com", "/no-such-code", roots)
	if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("GET over TLS: %d %s, want linkqr's 404 page", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !slices.Equal(leaf.DNSNames, []string{"go.acme-shop.com"}) {
		t.Errorf("certificate names %v", leaf.DNSNames)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates(resp), DNSName: "go.acme-shop.com"}); err != nil {
		t.Errorf("the certificate does not chain to Pebble's root: %v", err)
	}
	if n := certificates(first, "obtained"); n != 1 {
		t.Errorf("first instance obtained %d certificates, want 1", n)
	}
	if n := cachedRows(t, rig.pool, "go.acme-shop.com"); n != 1 {
		t.Errorf("%d certificates in PostgreSQL, want 1", n)
	}

	for _, name := range []string{"pending.acme-shop.com", "unknown.acme-shop.com"} {
		if err := handshake(tlsAddr, name); err == nil {
			t.Errorf("handshake for %s succeeded; it must get no certificate", name)
		}
		if n := cachedRows(t, rig.pool, name); n != 0 {
			t.Errorf("%s: %d certificates stored", name, n)
		}
	}
	if n := certificates(first, "refused"); n != 2 {
		t.Errorf("refused handshakes: %d, want 2", n)
	}

	second := rig.serve(t, "127.0.0.1:0", "127.0.0.1:0")
	resp2, leaf2 := httpsGet(t, second.App.TLSListenAddr().String(), "go.acme-shop.com", "/no-such-code", roots)
	if resp2.StatusCode != http.StatusNotFound {
		t.Errorf("second instance over TLS: %d", resp2.StatusCode)
	}
	if leaf2.SerialNumber.Cmp(leaf.SerialNumber) != 0 {
		t.Errorf("second instance serves serial %x, the first %x: it ordered a certificate of its own", leaf2.SerialNumber, leaf.SerialNumber)
	}
	if n := certificates(second, "obtained"); n != 0 {
		t.Errorf("second instance obtained %d certificates, want 0 (reused from PostgreSQL)", n)
	}
}

// TestTLSHTTP01ThroughAnotherInstance: when TLS-ALPN-01 cannot succeed
// (the CA's TLS port reaches no linkqr), the certificate comes by HTTP-01,
// answered by the plain listener before any routing, and by another
// instance than the one ordering: challenge tokens are shared through
// PostgreSQL like the certificates.
func TestTLSHTTP01ThroughAnotherInstance(t *testing.T) {
	t.Parallel()
	validatorAddr, deadTLSAddr := testkit.FreeAddr(t), testkit.FreeAddr(t)
	rig := newTLSRig(t, validatorAddr, deadTLSAddr)
	orderer := rig.serve(t, "127.0.0.1:0", "127.0.0.1:0")
	rig.serve(t, validatorAddr, "127.0.0.1:0") // the instance the CA's HTTP-01 requests reach
	rig.domain(t, orderer.App, "links.acme-shop.com", true)

	roots := rig.pebble.Roots(t)
	resp, leaf := httpsGet(t, orderer.App.TLSListenAddr().String(), "links.acme-shop.com", "/no-such-code", roots)
	if resp.StatusCode != http.StatusNotFound || !slices.Equal(leaf.DNSNames, []string{"links.acme-shop.com"}) {
		t.Errorf("GET over TLS: %d, certificate for %v", resp.StatusCode, leaf.DNSNames)
	}
	if n := certificates(orderer, "obtained"); n != 1 {
		t.Errorf("obtained %d certificates, want 1", n)
	}
}

// intermediates are the chain certificates the server sent after its leaf.
func intermediates(resp *http.Response) *x509.CertPool {
	pool := x509.NewCertPool()
	for _, c := range resp.TLS.PeerCertificates[1:] {
		pool.AddCert(c)
	}
	return pool
}

// TestTLSCertificateStateOfDomains: a domain's certificate check reads
// what the instances share without ordering anything: none before the
// first HTTPS visit, valid until the date of the certificate that visit
// obtained from the CA, and for a name the CA cannot validate (no address
// in DNS), failed with the CA's own reason.
func TestTLSCertificateStateOfDomains(t *testing.T) {
	t.Parallel()
	httpAddr, tlsAddr := testkit.FreeAddr(t), testkit.FreeAddr(t)
	rig := newTLSRig(t, httpAddr, tlsAddr)
	s := rig.serve(t, httpAddr, tlsAddr)
	rig.domain(t, s.App, "go.acme-shop.com", true)
	rig.domain(t, s.App, "broken.acme-shop.com", true)
	rig.dns.SetA("broken.acme-shop.com", netip.Addr{})
	ctx := context.Background()
	// certificate looks afresh: verifying again forgets the kept checks.
	certificate := func(host string) domain.Check {
		t.Helper()
		ds, _, err := s.App.Domains.List(ctx, rig.ws, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.Hostname.String() == host {
				if d, err = s.App.Domains.Verify(ctx, rig.ws, d.ID); err != nil {
					t.Fatal(err)
				}
				return s.App.Domains.Check(ctx, d, false).Checks.Certificate
			}
		}
		t.Fatalf("no domain %s", host)
		return domain.Check{}
	}
	if got := certificate("go.acme-shop.com"); got.State != domain.CheckPending || got.Detail != "None yet: the first HTTPS visit to https://go.acme-shop.com obtains one, in a few seconds." {
		t.Errorf("before any HTTPS visit: %+v", got)
	}
	if n := cachedRows(t, rig.pool, "go.acme-shop.com"); n != 0 {
		t.Fatalf("looking ordered a certificate: %d stored", n)
	}

	_, leaf := httpsGet(t, tlsAddr, "go.acme-shop.com", "/", rig.pebble.Roots(t))
	got := certificate("go.acme-shop.com")
	if want := "Valid until " + leaf.NotAfter.UTC().Format("2 Jan 2006, 15:04 UTC") + ", issued by " + leaf.Issuer.CommonName + "."; got.State != domain.CheckOK || got.Detail != want {
		t.Errorf("after the first visit: %+v, want %q", got, want)
	}

	if err := handshake(tlsAddr, "broken.acme-shop.com"); err == nil {
		t.Fatal("a certificate for a name without an address")
	}
	got = certificate("broken.acme-shop.com")
	if got.State != domain.CheckFailed || !strings.HasPrefix(got.Detail, "The last attempt, on ") ||
		!strings.Contains(got.Detail, "failed: the CA could not validate broken.acme-shop.com (") || !strings.Contains(got.Detail, "broken.acme-shop.com") {
		t.Errorf("a failed order: %+v", got)
	}
	t.Logf("the failed order's check: %s", got.Detail)
}
