package dnsserver_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/linkqr/linkqr/internal/dnsserver"
)

func query(t *testing.T, net, addr, name string) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeTXT)
	in, _, err := (&dns.Client{Net: net}).Exchange(m, addr)
	if err != nil {
		t.Fatalf("%s query %s: %v", net, name, err)
	}
	return in
}

func txts(m *dns.Msg) []string {
	var out []string
	for _, rr := range m.Answer {
		if txt, ok := rr.(*dns.TXT); ok {
			out = append(out, txt.Txt...)
		}
	}
	return out
}

// Records set answer authoritatively over UDP and TCP, any case; unknown
// and removed names answer NXDOMAIN; an answer too big for a datagram is
// truncated over UDP and whole over TCP.
func TestServer(t *testing.T) {
	t.Parallel()
	s, err := dnsserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetTXT("_linkqr.Go.Example.com", "linkqr-verification=abc")
	for _, net := range []string{"udp", "tcp"} {
		in := query(t, net, s.Addr, "_linkqr.go.example.COM")
		if got := txts(in); !in.Authoritative || in.Rcode != dns.RcodeSuccess || len(got) != 1 || got[0] != "linkqr-verification=abc" {
			t.Fatalf("%s: %v", net, in)
		}
		if in := query(t, net, s.Addr, "other.example.com"); in.Rcode != dns.RcodeNameError {
			t.Fatalf("%s unknown name: %v", net, in)
		}
	}
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("value-%02d-%s", i, "padding-padding-padding"))
	}
	s.SetTXT("big.example.com", many...)
	if in := query(t, "udp", s.Addr, "big.example.com"); !in.Truncated || len(txts(in)) >= len(many) {
		t.Fatalf("udp: %d answers, truncated %v", len(txts(in)), in.Truncated)
	}
	if in := query(t, "tcp", s.Addr, "big.example.com"); in.Truncated || len(txts(in)) != len(many) {
		t.Fatalf("tcp: %d answers, truncated %v", len(txts(in)), in.Truncated)
	}
	s.SetTXT("_linkqr.go.example.com")
	if in := query(t, "udp", s.Addr, "_linkqr.go.example.com"); in.Rcode != dns.RcodeNameError {
		t.Fatalf("removed name: %v", in)
	}
}

// An A record answers A questions; a TXT question for the same name has
// no answer, but the name exists.
func TestServerA(t *testing.T) {
	t.Parallel()
	s, err := dnsserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetA("Go.Example.com", netip.MustParseAddr("127.0.0.1"))
	m := new(dns.Msg)
	m.SetQuestion("go.example.com.", dns.TypeA)
	in, _, err := new(dns.Client).Exchange(m, s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Answer) != 1 || in.Answer[0].(*dns.A).A.String() != "127.0.0.1" {
		t.Fatalf("A: %v", in)
	}
	if in := query(t, "udp", s.Addr, "go.example.com"); in.Rcode != dns.RcodeSuccess || len(in.Answer) != 0 {
		t.Fatalf("TXT of a name with only an A record: %v", in)
	}
	s.SetA("go.example.com", netip.Addr{})
	if in := query(t, "udp", s.Addr, "go.example.com"); in.Rcode != dns.RcodeNameError {
		t.Fatalf("removed A: %v", in)
	}
}

// A CNAME answers every question for its name, followed by its target's
// records when they are here (and only the CNAME when they are not); an
// AAAA record answers AAAA questions.
func TestServerCNAMEAndAAAA(t *testing.T) {
	t.Parallel()
	s, err := dnsserver.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetA("edge.linkqr.test", netip.MustParseAddr("192.0.2.10"))
	s.SetAAAA("edge.linkqr.test", netip.MustParseAddr("2001:db8::10"))
	s.SetCNAME("Go.Example.com", "links.example.net")
	s.SetCNAME("links.example.net", "edge.linkqr.test")
	s.SetCNAME("away.example.com", "elsewhere.example.org")
	ask := func(name string, qtype uint16) []string {
		t.Helper()
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(name), qtype)
		in, _, err := new(dns.Client).Exchange(m, s.Addr)
		if err != nil || in.Rcode != dns.RcodeSuccess {
			t.Fatalf("%s %s: %v %v", name, dns.TypeToString[qtype], in, err)
		}
		var out []string
		for _, rr := range in.Answer {
			out = append(out, fmt.Sprintf("%s %s", rr.Header().Name, dns.TypeToString[rr.Header().Rrtype]))
			switch rr := rr.(type) {
			case *dns.CNAME:
				out[len(out)-1] += " " + rr.Target
			case *dns.A:
				out[len(out)-1] += " " + rr.A.String()
			case *dns.AAAA:
				out[len(out)-1] += " " + rr.AAAA.String()
			}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		qtype uint16
		want  string
	}{
		{"go.example.com", dns.TypeA, "go.example.com. CNAME links.example.net.|links.example.net. CNAME edge.linkqr.test.|edge.linkqr.test. A 192.0.2.10"},
		{"go.example.com", dns.TypeAAAA, "go.example.com. CNAME links.example.net.|links.example.net. CNAME edge.linkqr.test.|edge.linkqr.test. AAAA 2001:db8::10"},
		{"go.example.com", dns.TypeCNAME, "go.example.com. CNAME links.example.net."},
		{"go.example.com", dns.TypeTXT, "go.example.com. CNAME links.example.net.|links.example.net. CNAME edge.linkqr.test."},
		{"away.example.com", dns.TypeA, "away.example.com. CNAME elsewhere.example.org."},
		{"edge.linkqr.test", dns.TypeAAAA, "edge.linkqr.test. AAAA 2001:db8::10"},
	} {
		if got := strings.Join(ask(tc.name, tc.qtype), "|"); got != tc.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tc.name, dns.TypeToString[tc.qtype], got, tc.want)
		}
	}
	s.SetCNAME("go.example.com", "")
	m := new(dns.Msg)
	m.SetQuestion("go.example.com.", dns.TypeA)
	if in, _, err := new(dns.Client).Exchange(m, s.Addr); err != nil || in.Rcode != dns.RcodeNameError {
		t.Fatalf("removed CNAME: %v %v", in, err)
	}
}
