package domain

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// LookupTimeout bounds one verification lookup, retries included.
const LookupTimeout = 5 * time.Second

// Resolver looks names up: LookupTXT the TXT values at a name, LookupHost
// where a name leads (its CNAME chain and addresses); none (and no error)
// when the name or its records do not exist, an error when the lookup
// failed.
type Resolver interface {
	LookupTXT(ctx context.Context, name string) ([]string, error)
	LookupHost(ctx context.Context, name string) (Host, error)
}

// Host is where a name leads: the names of its CNAME chain in order (none
// when the name has address records of its own) and the addresses at
// the end of it. Names are lowercase, without the final dot.
type Host struct {
	CNAMEs []string
	Addrs  []netip.Addr
}

// maxCNAMEHops bounds a CNAME chain followed across answers.
const maxCNAMEHops = 8

// NewResolver returns the resolver of LINKQR_DNS_RESOLVER: a query to addr
// (host:port) over UDP, repeated over TCP when the answer was truncated;
// an empty addr is the system resolver.
func NewResolver(addr string) Resolver {
	if addr == "" {
		return systemResolver{}
	}
	return &serverResolver{addr: addr}
}

// systemResolver is net's resolver, with "no such name" as no values.
type systemResolver struct{}

func (systemResolver) LookupTXT(ctx context.Context, name string) ([]string, error) {
	vs, err := net.DefaultResolver.LookupTXT(ctx, name)
	if err != nil {
		return nil, systemError(err)
	}
	return vs, nil
}

func (systemResolver) LookupHost(ctx context.Context, name string) (Host, error) {
	var h Host
	cname, err := net.DefaultResolver.LookupCNAME(ctx, name)
	if err != nil {
		return h, systemError(err)
	}
	if c := canonical(cname); c != "" && c != canonical(name) {
		h.CNAMEs = []string{c} // the system resolver tells the end of the chain only
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", name)
	if err != nil {
		if err := systemError(err); err != nil {
			return Host{}, err
		}
		return h, nil // a CNAME to a name without addresses
	}
	for _, a := range addrs {
		h.Addrs = append(h.Addrs, a.Unmap())
	}
	return h, nil
}

// systemError is nil for "no such name", else the error people see.
func systemError(err error) error {
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return nil
	case errors.As(err, &dnsErr) && !dnsErr.IsTimeout:
		return errors.New(dnsErr.Err) // without the server's address
	}
	return errNoAnswer
}

// canonical is a DNS name as Host spells it.
func canonical(name string) string { return strings.ToLower(strings.TrimSuffix(name, ".")) }

// errNoAnswer is a resolver that did not answer in time or could not be
// reached; its address stays out of the message people see.
var errNoAnswer = errors.New("the DNS server did not answer")

// serverResolver asks one DNS server directly: tests run their own, and an
// operator may want verification to bypass a caching local resolver so a
// record just created is seen at once.
type serverResolver struct{ addr string }

// exchange asks the server one question: over UDP, again over TCP when
// the answer was truncated. "No such name" is an answer, not an error.
func (r *serverResolver) exchange(ctx context.Context, name string, qtype uint16) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = true
	m.SetEdns0(4096, false)
	in, _, err := (&dns.Client{Net: "udp"}).ExchangeContext(ctx, m, r.addr)
	if err == nil && in.Truncated {
		in, _, err = (&dns.Client{Net: "tcp"}).ExchangeContext(ctx, m, r.addr)
	}
	if err != nil {
		return nil, errNoAnswer
	}
	switch in.Rcode {
	case dns.RcodeSuccess, dns.RcodeNameError:
	default:
		return nil, fmt.Errorf("the DNS server answered %s", dns.RcodeToString[in.Rcode])
	}
	return in, nil
}

func (r *serverResolver) LookupTXT(ctx context.Context, name string) ([]string, error) {
	in, err := r.exchange(ctx, name, dns.TypeTXT)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rr := range in.Answer {
		if txt, ok := rr.(*dns.TXT); ok && strings.EqualFold(dns.Fqdn(txt.Hdr.Name), dns.Fqdn(name)) {
			// A TXT record of several strings is one value (RFC 7208 3.3).
			out = append(out, strings.Join(txt.Txt, ""))
		}
	}
	return out, nil
}

// LookupHost asks for A and AAAA records, following the CNAME chain the
// answers hold and asking again where one ends at a name whose addresses
// the answer lacks (a CNAME into another zone).
func (r *serverResolver) LookupHost(ctx context.Context, name string) (Host, error) {
	var h Host
	for i, qtype := range []uint16{dns.TypeA, dns.TypeAAAA} {
		chain, addrs, err := r.chase(ctx, canonical(name), qtype)
		if err != nil {
			return Host{}, err
		}
		if i == 0 || len(chain) > len(h.CNAMEs) {
			h.CNAMEs = chain
		}
		h.Addrs = append(h.Addrs, addrs...)
	}
	return h, nil
}

// chase follows name's CNAME chain to the records of qtype at its end.
func (r *serverResolver) chase(ctx context.Context, name string, qtype uint16) ([]string, []netip.Addr, error) {
	var chain []string
	at := name
	for range maxCNAMEHops {
		in, err := r.exchange(ctx, at, qtype)
		if err != nil {
			return nil, nil, err
		}
		cnames := map[string]string{}
		addrs := map[string][]netip.Addr{}
		for _, rr := range in.Answer {
			owner := canonical(rr.Header().Name)
			switch rr := rr.(type) {
			case *dns.CNAME:
				cnames[owner] = canonical(rr.Target)
			case *dns.A:
				if a, ok := netip.AddrFromSlice(rr.A); ok {
					addrs[owner] = append(addrs[owner], a.Unmap())
				}
			case *dns.AAAA:
				if a, ok := netip.AddrFromSlice(rr.AAAA); ok {
					addrs[owner] = append(addrs[owner], a)
				}
			}
		}
		for hops := 0; hops < maxCNAMEHops && cnames[at] != ""; hops++ {
			at = cnames[at]
			chain = append(chain, at)
		}
		if found := addrs[at]; len(found) > 0 || len(chain) == 0 || len(cnames) == 0 {
			return chain, found, nil
		}
		// The chain leaves the answer: ask about its end.
	}
	return chain, nil, fmt.Errorf("the CNAME chain of %s is longer than %d names", name, maxCNAMEHops)
}

// Outcome is the result of one look at a TXT record: Found when a value
// equals the expected one; otherwise Detail says what was seen.
type Outcome struct {
	Found  bool
	Detail string
}

// maxShown bounds what a failed check quotes, so a zone with many or huge
// TXT values does not make a huge problem detail or column.
const (
	maxShownValues = 5
	maxShownBytes  = 100
)

// check looks up d's record and compares it with the expected value.
func check(ctx context.Context, r Resolver, d Domain) Outcome {
	return CheckTXT(ctx, r, RecordName(d.Hostname), d.RecordValue())
}

// CheckTXT looks up the TXT values at name and reports Found when one is
// want; otherwise Detail says what the lookup saw. Custom domains and the
// e-mail domains of single sign-on are proven with it.
func CheckTXT(ctx context.Context, r Resolver, name, want string) Outcome {
	ctx, cancel := context.WithTimeout(ctx, LookupTimeout)
	defer cancel()
	values, err := r.LookupTXT(ctx, name)
	if err != nil {
		return Outcome{Detail: fmt.Sprintf("the DNS lookup of TXT %s failed: %s", name, err)}
	}
	for _, v := range values {
		if strings.TrimSpace(v) == want {
			return Outcome{Found: true}
		}
	}
	if len(values) == 0 {
		return Outcome{Detail: fmt.Sprintf("no TXT record at %s; create one with the value %s", name, want)}
	}
	return Outcome{Detail: fmt.Sprintf("found %s at %s, expected %q", shownValues(values), name, want)}
}
