package testkit

import (
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// DNSServer is a real authoritative DNS server on 127.0.0.1 (UDP and TCP
// on the same port) whose TXT and A records a test sets and changes; point
// LINKQR_DNS_RESOLVER (or an ACME test CA) at Addr. Unknown names answer
// NXDOMAIN; a known name without records of the type asked, no answer.
type DNSServer struct {
	Addr string // 127.0.0.1:port

	mu  sync.Mutex
	txt map[string][]string   // fully qualified lowercase name → values
	a   map[string]netip.Addr // fully qualified lowercase name → IPv4 address
}

// StartDNS starts a DNS server and stops it when the test ends.
func StartDNS(t testing.TB) *DNSServer {
	t.Helper()
	pc, ln := listenUDPAndTCP(t)
	addr := pc.LocalAddr().String()
	s := &DNSServer{Addr: addr, txt: map[string][]string{}, a: map[string]netip.Addr{}}
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: s}, {Listener: ln, Handler: s}} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go func() { _ = srv.ActivateAndServe() }()
		<-started
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	return s
}

// listenUDPAndTCP binds UDP and TCP on one free loopback port. The port
// the system picks for UDP may be taken for TCP: then it tries another.
func listenUDPAndTCP(t testing.TB) (net.PacketConn, net.Listener) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("testkit: dns udp listener: %v", err)
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, ln
		}
		_ = pc.Close()
		if attempt == 20 {
			t.Fatalf("testkit: dns tcp listener next to udp: %v", err)
		}
	}
}

// SetTXT replaces the TXT values of name (no values: the name is removed).
func (s *DNSServer) SetTXT(name string, values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(dns.Fqdn(name))
	if len(values) == 0 {
		delete(s.txt, key)
		return
	}
	s.txt[key] = values
}

// SetA points name at an IPv4 address (the zero Addr: removes the record),
// e.g. a test hostname at 127.0.0.1 for a CA validating it.
func (s *DNSServer) SetA(name string, ip netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(dns.Fqdn(name))
	if !ip.IsValid() {
		delete(s.a, key)
		return
	}
	s.a[key] = ip
}

// ServeDNS answers TXT and A questions from the records set.
func (s *DNSServer) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	s.mu.Lock()
	for _, q := range r.Question {
		values, hasTXT := s.txt[strings.ToLower(q.Name)]
		ip, hasA := s.a[strings.ToLower(q.Name)]
		if !hasTXT && !hasA {
			m.Rcode = dns.RcodeNameError
			continue
		}
		if q.Qtype == dns.TypeA && hasA {
			m.Answer = append(m.Answer, &dns.A{
				Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
				A:   ip.AsSlice(),
			})
		}
		if q.Qtype != dns.TypeTXT {
			continue
		}
		for _, v := range values {
			m.Answer = append(m.Answer, &dns.TXT{
				Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60},
				Txt: []string{v},
			})
		}
	}
	s.mu.Unlock()
	if _, udp := w.LocalAddr().(*net.UDPAddr); udp { // too big for the datagram: truncated, so the client asks over TCP
		size := dns.MinMsgSize
		if o := r.IsEdns0(); o != nil {
			size = int(o.UDPSize())
		}
		m.Truncate(size)
	}
	_ = w.WriteMsg(m)
}
