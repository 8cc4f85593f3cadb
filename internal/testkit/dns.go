package testkit

import (
	"testing"

	"github.com/linkqr/linkqr/internal/dnsserver"
)

// DNSServer is a real authoritative DNS server on 127.0.0.1 (UDP and TCP
// on the same port) whose TXT and A records a test sets and changes; point
// LINKQR_DNS_RESOLVER (or an ACME test CA) at Addr. Unknown names answer
// NXDOMAIN; a known name without records of the type asked, no answer.
type DNSServer = dnsserver.Server

// StartDNS starts a DNS server and stops it when the test ends.
func StartDNS(t testing.TB) *DNSServer {
	t.Helper()
	s, err := dnsserver.Start()
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
