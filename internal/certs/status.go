package certs

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"

	"github.com/linkqr/linkqr/internal/certs/internal/certsdb"
	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/store"
)

// State is where a hostname's certificate stands.
type State string

// States of a certificate.
const (
	StateNone      State = "none"      // none stored, no order under way, none failed
	StateObtaining State = "obtaining" // an order is under way
	StateValid     State = "valid"     // one is stored, valid until NotAfter
	StateExpired   State = "expired"   // the stored one expired at NotAfter
	StateFailed    State = "failed"    // the last order failed, for Reason
)

// orderTimeout is how long autocert gives an order: a row saying one is
// under way for longer belongs to an instance that stopped meanwhile.
const orderTimeout = 5 * time.Minute

// maxReason bounds a failure's reason as stored (acme_status.detail).
const maxReason = 900

// Status is what every instance knows of a hostname's certificate: the
// certificate stored in acme_cache and the last order's row in
// acme_status. Nothing here orders a certificate.
type Status struct {
	State    State
	NotAfter time.Time // valid, expired: the end of the certificate's validity
	Issuer   string    // valid, expired: the issuing CA's name on the certificate
	At       time.Time // obtaining: when the order began; failed: when it failed
	Reason   string    // failed: the CA's reason, or why it could not be asked
}

// Status tells host's certificate state at now.
func (c *Cache) Status(ctx context.Context, host string, now time.Time) (Status, error) {
	var st Status
	plain, err := c.get(ctx, host)
	switch {
	case err == nil:
		if leaf := leafOf(plain); leaf != nil {
			st.NotAfter, st.Issuer = leaf.NotAfter, issuerName(leaf)
			if now.Before(leaf.NotAfter) {
				st.State = StateValid
				return st, nil
			}
		}
	case !errors.Is(err, autocert.ErrCacheMiss):
		return Status{}, err
	}
	row, err := certsdb.New().ACMEStatusGet(ctx, c.db.Conn(ctx), certsdb.ACMEStatusGetParams{Issuer: c.issuer, Name: host})
	if err = store.InterpretError(err); err != nil && !errors.Is(err, id.ErrNotFound) {
		return Status{}, err
	}
	switch {
	case err == nil && row.State == string(StateFailed):
		st.State, st.At, st.Reason = StateFailed, row.UpdatedAt, deref(row.Detail)
	case err == nil && row.State == string(StateObtaining) && now.Sub(row.UpdatedAt) < orderTimeout:
		st.State, st.At = StateObtaining, row.UpdatedAt
	case !st.NotAfter.IsZero():
		st.State = StateExpired
	default:
		st.State = StateNone
	}
	return st, nil
}

// leafOf is the first certificate of an autocert cache entry (the private
// key's PEM block, then the chain's), or nil.
func leafOf(entry []byte) *x509.Certificate {
	for rest := entry; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil
		}
		if b.Type == "CERTIFICATE" {
			leaf, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil
			}
			return leaf
		}
	}
}

func issuerName(c *x509.Certificate) string {
	if c.Issuer.CommonName != "" {
		return c.Issuer.CommonName
	}
	if len(c.Issuer.Organization) > 0 {
		return c.Issuer.Organization[0]
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// certificateHost is the hostname of a certificate's cache name ("host",
// or "host+rsa" for clients without ECDSA); false for the account key's
// and the challenge tokens' names.
func certificateHost(name string) (string, bool) {
	host, rsa := strings.CutSuffix(name, "+rsa")
	return host, rsa || !strings.Contains(name, "+")
}

// obtaining notes that an order for host begins.
func (c *Cache) obtaining(ctx context.Context, host string) {
	if err := certsdb.New().ACMEStatusObtaining(ctx, c.db.Conn(ctx), certsdb.ACMEStatusObtainingParams{Issuer: c.issuer, Name: host}); err != nil {
		c.log.Warn("note a certificate order", "host", host, "err", err)
	}
}

// obtained notes that host's certificate arrived.
func (c *Cache) obtained(ctx context.Context, host string) {
	if err := certsdb.New().ACMEStatusClear(ctx, c.db.Conn(ctx), certsdb.ACMEStatusClearParams{Issuer: c.issuer, Name: host}); err != nil {
		c.log.Warn("note a certificate obtained", "host", host, "err", err)
	}
}

// failed notes that host's order ended without a certificate, for reason.
func (c *Cache) failed(ctx context.Context, host, reason string) {
	if len(reason) > maxReason {
		cut := maxReason
		for cut > 0 && !utf8.RuneStart(reason[cut]) {
			cut--
		}
		reason = reason[:cut] + "…"
	}
	if err := certsdb.New().ACMEStatusFailed(ctx, c.db.Conn(ctx), certsdb.ACMEStatusFailedParams{Issuer: c.issuer, Name: host, Detail: reason}); err != nil {
		c.log.Warn("note a failed certificate order", "host", host, "err", err)
	}
}

// memoized reports whether err is autocert repeating an order's failure
// from memory (for a minute after it, or to a handshake that waited for
// it) rather than the order's own error, which says why.
func memoized(err error) bool {
	msg := err.Error()
	return msg == "acme/autocert: missing certificate" || msg == "acme/autocert: missing signer"
}

// caReasons is the ACME client's HTTP transport, keeping what the CA said
// about each identifier's invalid authorizations: autocert tries every
// challenge type and then reports only that none was viable, dropping the
// CA's words (a DNS problem, a refused connection) that people need.
type caReasons struct {
	next http.RoundTripper
	mu   sync.Mutex
	last map[string]map[string]string // hostname → challenge type → the CA's detail
}

func (c *caReasons) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	var authz struct {
		Identifier struct {
			Value string `json:"value"`
		} `json:"identifier"`
		Status     string `json:"status"`
		Challenges []struct {
			Type  string `json:"type"`
			Error *struct {
				Detail string `json:"detail"`
			} `json:"error"`
		} `json:"challenges"`
	}
	if json.Unmarshal(body, &authz) != nil || authz.Status != acme.StatusInvalid || authz.Identifier.Value == "" {
		return resp, nil
	}
	host := strings.ToLower(authz.Identifier.Value)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range authz.Challenges {
		if ch.Error == nil || ch.Error.Detail == "" {
			continue
		}
		if c.last == nil {
			c.last = map[string]map[string]string{}
		}
		if c.last[host] == nil {
			c.last[host] = map[string]string{}
		}
		c.last[host][ch.Type] = ch.Error.Detail
	}
	return resp, nil
}

// take returns (and forgets) what the CA said about host's challenges:
// "tls-alpn-01: …; http-01: …", or "".
func (c *caReasons) take(host string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	byType := c.last[host]
	delete(c.last, host)
	types := make([]string, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(types))) // tls-alpn-01 (tried first), then http-01
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = t + ": " + byType[t]
	}
	return strings.Join(parts, "; ")
}

// reason is why an order for host failed, in the CA's words when it gave
// some.
func (c *caReasons) reason(host string, err error) string {
	said := c.take(host)
	var problem *acme.Error
	var authz *acme.AuthorizationError
	switch {
	case said != "":
		return "the CA could not validate " + host + " (" + said + ")"
	case errors.As(err, &authz):
		return "the CA refused the authorization: " + strings.TrimPrefix(authz.Error(), "acme: ")
	case errors.As(err, &problem) && problem.Detail != "":
		return "the CA refused: " + problem.Detail
	case errors.As(err, &problem):
		return "the CA refused: " + problem.ProblemType
	}
	return strings.TrimPrefix(err.Error(), "acme/autocert: ")
}
