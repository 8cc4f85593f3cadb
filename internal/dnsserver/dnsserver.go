// Package dnsserver is a real authoritative DNS server on loopback whose
// TXT and A records are set in memory: domain verification (through
// LINKQR_DNS_RESOLVER) and an ACME test CA look records up through it in
// tests and in the bench, which cannot publish records in the real DNS.
package dnsserver

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"

	"github.com/miekg/dns"
)

// Server answers on 127.0.0.1, UDP and TCP on the same port (a truncated
// UDP answer makes the client ask again over TCP). Unknown names answer
// NXDOMAIN; a known name without records of the type asked, no answer.
type Server struct {
	Addr string // 127.0.0.1:port

	servers []*dns.Server

	mu  sync.Mutex
	txt map[string][]string   // fully qualified lowercase name → values
	a   map[string]netip.Addr // fully qualified lowercase name → IPv4 address
}

// Start starts a server; Close stops it.
func Start() (*Server, error) {
	pc, ln, err := listenUDPAndTCP()
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: pc.LocalAddr().String(), txt: map[string][]string{}, a: map[string]netip.Addr{}}
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: s}, {Listener: ln, Handler: s}} {
		started := make(chan struct{})
		failed := make(chan error, 1)
		srv.NotifyStartedFunc = func() { close(started) }
		go func() { failed <- srv.ActivateAndServe() }()
		select {
		case <-started:
			s.servers = append(s.servers, srv)
		case err := <-failed:
			_ = pc.Close()
			_ = ln.Close()
			return nil, errors.Join(fmt.Errorf("dnsserver: %w", err), s.Close())
		}
	}
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error {
	var errs []error
	for _, srv := range s.servers {
		errs = append(errs, srv.Shutdown())
	}
	s.servers = nil
	return errors.Join(errs...)
}

// listenUDPAndTCP binds UDP and TCP on one free loopback port. The port
// the system picks for UDP may be taken for TCP: then it tries another.
func listenUDPAndTCP() (net.PacketConn, net.Listener, error) {
	for attempt := 0; ; attempt++ {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, fmt.Errorf("dnsserver: udp listener: %w", err)
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, ln, nil
		}
		_ = pc.Close()
		if attempt == 20 {
			return nil, nil, fmt.Errorf("dnsserver: tcp listener next to udp: %w", err)
		}
	}
}

// SetTXT replaces the TXT values of name (no values: the name is removed).
func (s *Server) SetTXT(name string, values ...string) {
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
func (s *Server) SetA(name string, ip netip.Addr) {
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
func (s *Server) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
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
