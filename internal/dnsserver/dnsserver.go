// Package dnsserver is a real authoritative DNS server on loopback whose
// TXT, A, AAAA and CNAME records are set in memory: domain verification
// and the checks of where a domain points (through LINKQR_DNS_RESOLVER)
// and an ACME test CA look records up through it in tests and in the
// bench, which cannot publish records in the real DNS.
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
// NXDOMAIN; a known name without records of the type asked, no answer. A
// name with a CNAME answers it for every type, followed by what its
// target holds here (as an authoritative server does within its zone).
type Server struct {
	Addr string // 127.0.0.1:port

	servers []*dns.Server

	mu    sync.Mutex
	txt   map[string][]string   // fully qualified lowercase name → values
	a     map[string]netip.Addr // fully qualified lowercase name → IPv4 address
	aaaa  map[string]netip.Addr // fully qualified lowercase name → IPv6 address
	cname map[string]string     // fully qualified lowercase name → fully qualified target
}

// Start starts a server; Close stops it.
func Start() (*Server, error) {
	pc, ln, err := listenUDPAndTCP()
	if err != nil {
		return nil, err
	}
	s := &Server{
		Addr: pc.LocalAddr().String(), txt: map[string][]string{},
		a: map[string]netip.Addr{}, aaaa: map[string]netip.Addr{}, cname: map[string]string{},
	}
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
	setRecord(s, s.txt, name, values, len(values) > 0)
}

// SetA points name at an IPv4 address (the zero Addr: removes the record),
// e.g. a test hostname at 127.0.0.1 for a CA validating it.
func (s *Server) SetA(name string, ip netip.Addr) { setRecord(s, s.a, name, ip, ip.IsValid()) }

// SetAAAA points name at an IPv6 address (the zero Addr: removes the
// record).
func (s *Server) SetAAAA(name string, ip netip.Addr) { setRecord(s, s.aaaa, name, ip, ip.IsValid()) }

// SetCNAME makes name an alias of target ("": removes the record). A name
// with a CNAME answers nothing else, whatever else is set for it.
func (s *Server) SetCNAME(name, target string) {
	setRecord(s, s.cname, name, strings.ToLower(dns.Fqdn(target)), target != "")
}

// setRecord sets name's record in records (one of s's maps, made once in
// Start) to v, or removes it when set is false, under s.mu.
func setRecord[V any](s *Server, records map[string]V, name string, v V, set bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(dns.Fqdn(name))
	if !set {
		delete(records, key)
		return
	}
	records[key] = v
}

// maxChain bounds the CNAME chain followed in one answer.
const maxChain = 8

// ServeDNS answers TXT, A, AAAA and CNAME questions from the records set.
func (s *Server) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	s.mu.Lock()
	for _, q := range r.Question {
		owner, name := q.Name, strings.ToLower(q.Name) // the answer spells the question's name as asked
		if !s.known(name) {
			m.Rcode = dns.RcodeNameError
			continue
		}
		for range maxChain {
			target, alias := s.cname[name]
			if !alias {
				break
			}
			m.Answer = append(m.Answer, &dns.CNAME{
				Hdr:    dns.RR_Header{Name: owner, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 60},
				Target: target,
			})
			owner, name = target, target
			if q.Qtype == dns.TypeCNAME {
				break
			}
		}
		if _, alias := s.cname[name]; alias || q.Qtype == dns.TypeCNAME {
			continue
		}
		m.Answer = append(m.Answer, s.records(owner, name, q.Qtype)...)
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

// known reports whether name has any record here.
func (s *Server) known(name string) bool {
	_, txt := s.txt[name]
	_, a := s.a[name]
	_, aaaa := s.aaaa[name]
	_, alias := s.cname[name]
	return txt || a || aaaa || alias
}

// records are name's own records of type qtype, under owner (name as
// the question spelt it).
func (s *Server) records(owner, name string, qtype uint16) []dns.RR {
	hdr := dns.RR_Header{Name: owner, Rrtype: qtype, Class: dns.ClassINET, Ttl: 60}
	switch qtype {
	case dns.TypeA:
		if ip, ok := s.a[name]; ok {
			return []dns.RR{&dns.A{Hdr: hdr, A: ip.AsSlice()}}
		}
	case dns.TypeAAAA:
		if ip, ok := s.aaaa[name]; ok {
			return []dns.RR{&dns.AAAA{Hdr: hdr, AAAA: ip.AsSlice()}}
		}
	case dns.TypeTXT:
		var out []dns.RR
		for _, v := range s.txt[name] {
			out = append(out, &dns.TXT{Hdr: hdr, Txt: []string{v}})
		}
		return out
	}
	return nil
}
