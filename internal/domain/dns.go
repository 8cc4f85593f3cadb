package domain

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// LookupTimeout bounds one verification lookup, retries included.
const LookupTimeout = 5 * time.Second

// Resolver looks up the TXT values at a name: none (and no error) when the
// name or its TXT records do not exist; an error when the lookup failed.
type Resolver interface {
	LookupTXT(ctx context.Context, name string) ([]string, error)
}

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
	var dnsErr *net.DNSError
	switch {
	case err == nil:
		return vs, nil
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return nil, nil
	case errors.As(err, &dnsErr) && !dnsErr.IsTimeout:
		return nil, errors.New(dnsErr.Err) // without the server's address
	}
	return nil, errNoAnswer
}

// errNoAnswer is a resolver that did not answer in time or could not be
// reached; its address stays out of the message people see.
var errNoAnswer = errors.New("the DNS server did not answer")

// serverResolver asks one DNS server directly: tests run their own, and an
// operator may want verification to bypass a caching local resolver so a
// record just created is seen at once.
type serverResolver struct{ addr string }

func (r *serverResolver) LookupTXT(ctx context.Context, name string) ([]string, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeTXT)
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
	var out []string
	for _, rr := range in.Answer {
		if txt, ok := rr.(*dns.TXT); ok && strings.EqualFold(dns.Fqdn(txt.Hdr.Name), dns.Fqdn(name)) {
			// A TXT record of several strings is one value (RFC 7208 3.3).
			out = append(out, strings.Join(txt.Txt, ""))
		}
	}
	return out, nil
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
	return Outcome{Detail: fmt.Sprintf("found %s at %s, expected %q", strings.Join(shown, ", "), name, want)}
}
