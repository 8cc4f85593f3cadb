package testkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Pebble is Let's Encrypt's ACME test server (Debian package pebble),
// running as a child process for one test: a real CA that validates
// challenges by connecting to the ports it is given, resolving names
// through the test's DNS server.
type Pebble struct {
	Directory string // the ACME directory URL, for LINKQR_ACME_DIRECTORY
	// CAFile is the PEM certificate of Pebble's own HTTPS, for
	// LINKQR_ACME_CA_ROOTS.
	CAFile string
	mgmt   string // base URL of the management interface
	client *http.Client
}

// PebbleOptions say where Pebble validates: HTTP-01 on HTTPPort and
// TLS-ALPN-01 on TLSPort of the address DNS gives for the hostname.
type PebbleOptions struct {
	DNS      string // host:port of the DNS server Pebble resolves through
	HTTPPort int
	TLSPort  int
}

// StartPebble starts Pebble and stops it when the test ends. Without the
// pebble binary the test is skipped, or fails under LINKQR_TEST_STRICT=1.
func StartPebble(t testing.TB, o PebbleOptions) *Pebble {
	t.Helper()
	bin := RequireBinary(t, "pebble")
	dir := t.TempDir()
	certPEM, keyPEM := selfSignedLoopback(t)
	p := &Pebble{CAFile: filepath.Join(dir, "ca.pem")}
	keyFile := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(p.CAFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(certPEM)
	p.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	// Pebble picks no free ports itself: take two, free them and hand them
	// over; if another process took one meanwhile, Pebble exits and the
	// next attempt takes others.
	for attempt := 1; ; attempt++ {
		api, mgmt := FreeAddr(t), FreeAddr(t)
		cfg := map[string]any{"pebble": map[string]any{
			"listenAddress": api, "managementListenAddress": mgmt,
			"certificate": p.CAFile, "privateKey": keyFile,
			"httpPort": o.HTTPPort, "tlsPort": o.TLSPort,
			"ocspResponderURL": "", "externalAccountBindingRequired": false,
		}}
		cfgFile := filepath.Join(dir, "pebble.json")
		b, _ := json.Marshal(cfg)
		if err := os.WriteFile(cfgFile, b, 0o600); err != nil {
			t.Fatal(err)
		}
		p.Directory, p.mgmt = "https://"+api+"/dir", "https://"+mgmt
		if p.start(t, bin, cfgFile, o.DNS) {
			return p
		}
		if attempt == 3 {
			t.Fatal("testkit: pebble did not start (its output is above)")
		}
	}
}

// start runs Pebble and waits until its directory answers; false if it
// exited first.
func (p *Pebble) start(t testing.TB, bin, cfgFile, dnsAddr string) bool {
	t.Helper()
	cmd := exec.Command(bin, "-config", cfgFile, "-dnsserver", dnsAddr)
	// No sleeping before validations, no good nonces refused at random,
	// no authorizations reused between orders: each order is validated.
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_AUTHZREUSE=0")
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("testkit: start pebble: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("pebble output:\n%s", out.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Logf("pebble exited at start:\n%s", out.String())
			return false
		default:
		}
		if resp, err := p.client.Get(p.Directory); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("testkit: pebble's directory did not answer within 20s:\n%s", out.String())
	return false
}

// Roots is the pool holding Pebble's root certificate (management
// interface /roots/0), to which the certificates it issues chain.
func (p *Pebble) Roots(t testing.TB) *x509.CertPool {
	t.Helper()
	resp, err := p.client.Get(p.mgmt + "/roots/0")
	if err != nil {
		t.Fatalf("testkit: pebble root: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("testkit: pebble root: %d %v", resp.StatusCode, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("testkit: pebble root is not PEM: %q", b)
	}
	return pool
}

// FreeAddr is a loopback host:port nothing listens on right now, for a
// server that must be told its port before it starts (another process
// may take it meanwhile: rare, and the start then fails loudly).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// selfSignedLoopback is a certificate and key for 127.0.0.1 and localhost,
// in PEM: the HTTPS of a test server that clients trust explicitly.
func selfSignedLoopback(t testing.TB) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "linkqr test CA server"},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:        true, BasicConstraintsValid: true,
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb})
}
