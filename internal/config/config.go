// Package config turns the LINKQR_* environment into a validated Config, once,
// at start. Every bad value is reported as one line naming the variable, so an
// operator can fix a deployment without reading code.
package config

import (
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/linkqr/linkqr/internal/hostname"
)

// DefaultMetricsAddr is where /metrics listens unless LINKQR_METRICS_ADDR
// says otherwise: loopback, so a default deployment publishes nothing.
const DefaultMetricsAddr = "127.0.0.1:9090"

// MetricsOff as LINKQR_METRICS_ADDR runs no metrics listener at all.
const MetricsOff = "off"

// Config is the whole runtime configuration of one linkqr process.
type Config struct {
	Addr                string         // LINKQR_ADDR: host:port to listen on
	BaseURL             *url.URL       // LINKQR_BASE_URL: public origin of UI, API and docs
	ShortBaseURL        *url.URL       // LINKQR_SHORT_BASE_URL: origin of short URLs and QR codes
	DatabaseURL         string         // LINKQR_DATABASE_URL: empty means the embedded cluster
	DataDir             string         // LINKQR_DATA_DIR: embedded cluster and generated secrets
	DataDirSet          bool           // LINKQR_DATA_DIR was given, not defaulted: operator commands may create a cluster there
	SecretKey           []byte         // LINKQR_SECRET_KEY, decoded; nil means "generate into DataDir"
	RedisURL            string         // LINKQR_REDIS_URL: shared rate limits when set
	TrustedProxies      []netip.Prefix // LINKQR_TRUSTED_PROXIES
	WebhookAllowPrivate bool           // LINKQR_WEBHOOK_ALLOW_PRIVATE
	MetricsAddr         string         // LINKQR_METRICS_ADDR: the only listener of /metrics; empty ("off") means none
	// DNSResolver (LINKQR_DNS_RESOLVER) is the host:port of the DNS server
	// that verifies custom domains' TXT records; empty: the system resolver.
	DNSResolver string
	// CustomDomainScheme (LINKQR_CUSTOM_DOMAIN_SCHEME) is the scheme of
	// short URLs on custom domains: https, or http for development.
	CustomDomainScheme string
	// CustomDomainTarget (LINKQR_CUSTOM_DOMAIN_TARGET) is what custom
	// domains point at: a hostname to CNAME to, or the addresses of A and
	// AAAA records. Default: the host of LINKQR_BASE_URL.
	CustomDomainTarget hostname.Target
	Geo                Geo // LINKQR_COUNTRY_HEADER, LINKQR_GEOIP_DB
	// TLS (LINKQR_TLS_ADDR, LINKQR_ACME_*) is on-demand TLS for verified
	// custom domains; zero: no TLS listener.
	TLS          TLS
	SMTP         SMTP          // LINKQR_SMTP_URL: zero means no e-mail
	MailFrom     *mail.Address // LINKQR_MAIL_FROM: sender of every message
	LogLevel     slog.Level    // LINKQR_LOG_LEVEL
	LogFormat    string        // LINKQR_LOG_FORMAT: "text" or "json"
	FoldInterval time.Duration // LINKQR_ANALYTICS_FOLD_INTERVAL: how often recorded scans are folded into analytics
	// SaturatedFoldInterval (LINKQR_SATURATED_FOLD_INTERVAL) is how often
	// while the CPUs are contended (priority.Governor.Contended).
	SaturatedFoldInterval time.Duration
	// SaturationLatency (LINKQR_SATURATION_LATENCY) is the scheduling-latency
	// p99 from which the process is saturated and deliveries and reports
	// yield to the redirect; SaturatedDeliveryPace
	// (LINKQR_SATURATED_DELIVERY_PACE) is the webhook attempts a second
	// allowed meanwhile.
	SaturationLatency     time.Duration
	SaturatedDeliveryPace int
	// OAuthRegistrationRate (LINKQR_OAUTH_REGISTRATION_RATE_LIMIT) is how
	// many clients one address may register a minute at POST
	// /oauth/register (RFC 7591), which needs no credential.
	OAuthRegistrationRate int
	// OAuthRegistrationHourlyCap (LINKQR_OAUTH_REGISTRATION_HOURLY_CAP,
	// default 500) is how many clients the whole instance lets register
	// in an hour, from all addresses together.
	OAuthRegistrationHourlyCap int
	// DatabaseDirectURL (LINKQR_DATABASE_DIRECT_URL) reaches the primary
	// without PgBouncer: LISTEN, River and migrations need a session of
	// their own, which transaction pooling cannot give. Empty: DatabaseURL.
	DatabaseDirectURL string
	// DatabaseReadURL (LINKQR_DATABASE_READ_URL) is a streaming replica for
	// analytics, scan lists and exports; empty: they read the primary.
	// ReadMaxLag (LINKQR_READ_MAX_LAG) is how far behind it may be before
	// those reads fall back to the primary.
	DatabaseReadURL string
	ReadMaxLag      time.Duration
	// Roles (LINKQR_ROLES, `serve --role`) are the faces this process runs.
	Roles Roles
	// Retention (LINKQR_*_RETENTION_*, LINKQR_RETENTION_*) bounds what the
	// database keeps.
	Retention Retention
}

// Error is a configuration error; its message names the variable.
type Error struct {
	Var    string
	Value  string
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s=%q is invalid: %s", e.Var, e.Value, e.Reason)
}

// Load reads the configuration from getenv (os.Getenv in production, a map in
// tests). isTerminal tells whether logs go to a terminal, which picks the
// default log format.
func Load(getenv func(string) string, isTerminal bool) (*Config, error) {
	c := &Config{}
	c.Addr = orDefault(getenv("LINKQR_ADDR"), "127.0.0.1:8080")
	if err := checkAddr(c.Addr); err != nil {
		return nil, &Error{"LINKQR_ADDR", c.Addr, err.Error()}
	}

	base, err := parseOrigin("LINKQR_BASE_URL", getenv("LINKQR_BASE_URL"), "http://"+c.Addr)
	if err != nil {
		return nil, err
	}
	c.BaseURL = base
	short, err := parseOrigin("LINKQR_SHORT_BASE_URL", getenv("LINKQR_SHORT_BASE_URL"), base.String())
	if err != nil {
		return nil, err
	}
	c.ShortBaseURL = short

	c.DatabaseURL = getenv("LINKQR_DATABASE_URL")
	if c.DatabaseURL != "" {
		if err := checkDatabaseURL(c.DatabaseURL); err != nil {
			return nil, &Error{"LINKQR_DATABASE_URL", redactURL(c.DatabaseURL), err.Error()}
		}
	}
	for _, v := range []struct {
		name string
		dst  *string
	}{{"LINKQR_DATABASE_DIRECT_URL", &c.DatabaseDirectURL}, {"LINKQR_DATABASE_READ_URL", &c.DatabaseReadURL}} {
		*v.dst = getenv(v.name)
		if *v.dst == "" {
			continue
		}
		if c.DatabaseURL == "" {
			return nil, &Error{v.name, redactURL(*v.dst), "needs LINKQR_DATABASE_URL: the embedded cluster has no PgBouncer or replica"}
		}
		if err := checkDatabaseURL(*v.dst); err != nil {
			return nil, &Error{v.name, redactURL(*v.dst), err.Error()}
		}
	}
	if c.ReadMaxLag, err = durationVar(getenv, "LINKQR_READ_MAX_LAG", 30*time.Second, time.Second, time.Hour); err != nil {
		return nil, err
	}
	if c.Roles, err = ParseRoles(getenv("LINKQR_ROLES")); err != nil {
		return nil, &Error{"LINKQR_ROLES", getenv("LINKQR_ROLES"), err.Error()}
	}
	c.DataDir = orDefault(getenv("LINKQR_DATA_DIR"), "./var")
	c.DataDirSet = getenv("LINKQR_DATA_DIR") != ""

	if v := getenv("LINKQR_SECRET_KEY"); v != "" {
		key, err := DecodeSecretKey(v)
		if err != nil {
			return nil, &Error{"LINKQR_SECRET_KEY", "(redacted)", err.Error()}
		}
		c.SecretKey = key
	}

	c.RedisURL = getenv("LINKQR_REDIS_URL")
	if c.RedisURL != "" {
		u, err := url.Parse(c.RedisURL)
		if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss" && u.Scheme != "unix") {
			return nil, &Error{"LINKQR_REDIS_URL", redactURL(c.RedisURL), "must be a redis://, rediss:// or unix:// URL"}
		}
	}

	c.TrustedProxies, err = parseCIDRs(getenv("LINKQR_TRUSTED_PROXIES"))
	if err != nil {
		return nil, &Error{"LINKQR_TRUSTED_PROXIES", getenv("LINKQR_TRUSTED_PROXIES"), err.Error()}
	}

	if v := getenv("LINKQR_WEBHOOK_ALLOW_PRIVATE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, &Error{"LINKQR_WEBHOOK_ALLOW_PRIVATE", v, "must be true or false"}
		}
		c.WebhookAllowPrivate = b
	}

	// /metrics is never public: it has a listener of its own, loopback by
	// default, and "off" runs none. Empty takes the default like every other
	// variable, so a blank line in an env file cannot silently stop metrics.
	c.MetricsAddr = orDefault(getenv("LINKQR_METRICS_ADDR"), DefaultMetricsAddr)
	if c.MetricsAddr == MetricsOff {
		c.MetricsAddr = ""
	} else {
		if err := checkAddr(c.MetricsAddr); err != nil {
			return nil, &Error{"LINKQR_METRICS_ADDR", c.MetricsAddr, err.Error() + `, or "off"`}
		}
		if sameListener(c.MetricsAddr, c.Addr) {
			return nil, &Error{"LINKQR_METRICS_ADDR", c.MetricsAddr, `must differ from LINKQR_ADDR: metrics get a listener of their own (another port, or "off")`}
		}
	}

	c.DNSResolver = getenv("LINKQR_DNS_RESOLVER")
	if c.DNSResolver != "" {
		if !dnsServerAddr(c.DNSResolver) {
			return nil, &Error{"LINKQR_DNS_RESOLVER", c.DNSResolver, "must be host:port of a DNS server, e.g. 127.0.0.1:53"}
		}
	}
	switch c.CustomDomainScheme = orDefault(getenv("LINKQR_CUSTOM_DOMAIN_SCHEME"), "https"); c.CustomDomainScheme {
	case "https", "http":
	default:
		return nil, &Error{"LINKQR_CUSTOM_DOMAIN_SCHEME", c.CustomDomainScheme, "must be https or http"}
	}
	if v := getenv("LINKQR_CUSTOM_DOMAIN_TARGET"); v != "" {
		if c.CustomDomainTarget, err = hostname.ParseTarget(v); err != nil {
			return nil, &Error{"LINKQR_CUSTOM_DOMAIN_TARGET", v, err.Error()}
		}
	} else {
		c.CustomDomainTarget = hostname.TargetOf(c.BaseURL.Hostname())
	}

	if c.Geo, err = loadGeo(getenv); err != nil {
		return nil, err
	}

	if c.TLS, err = loadTLS(getenv, c.Addr, c.MetricsAddr); err != nil {
		return nil, err
	}

	if c.FoldInterval, err = durationVar(getenv, "LINKQR_ANALYTICS_FOLD_INTERVAL", 5*time.Second, 100*time.Millisecond, 5*time.Minute); err != nil {
		return nil, err
	}
	if c.SaturatedFoldInterval, err = durationVar(getenv, "LINKQR_SATURATED_FOLD_INTERVAL", 30*time.Second, 100*time.Millisecond, 15*time.Minute); err != nil {
		return nil, err
	}
	if c.SaturationLatency, err = durationVar(getenv, "LINKQR_SATURATION_LATENCY", 2*time.Millisecond, 100*time.Microsecond, time.Second); err != nil {
		return nil, err
	}
	c.SaturatedDeliveryPace = 50
	if v := getenv("LINKQR_SATURATED_DELIVERY_PACE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100_000 {
			return nil, &Error{"LINKQR_SATURATED_DELIVERY_PACE", v, "must be a whole number of attempts a second from 1 to 100000"}
		}
		c.SaturatedDeliveryPace = n
	}
	c.OAuthRegistrationRate = 10
	if v := getenv("LINKQR_OAUTH_REGISTRATION_RATE_LIMIT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100_000 {
			return nil, &Error{"LINKQR_OAUTH_REGISTRATION_RATE_LIMIT", v, "must be a whole number of registrations a minute from 1 to 100000"}
		}
		c.OAuthRegistrationRate = n
	}
	c.OAuthRegistrationHourlyCap = 500
	if v := getenv("LINKQR_OAUTH_REGISTRATION_HOURLY_CAP"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1_000_000 {
			return nil, &Error{"LINKQR_OAUTH_REGISTRATION_HOURLY_CAP", v, "must be a whole number of registrations an hour from 1 to 1000000"}
		}
		c.OAuthRegistrationHourlyCap = n
	}
	if c.Retention, err = loadRetention(getenv); err != nil {
		return nil, err
	}
	if v := getenv("LINKQR_SMTP_URL"); v != "" {
		if c.SMTP, err = parseSMTP(v); err != nil {
			return nil, err
		}
	}
	if c.MailFrom, err = parseMailFrom(getenv("LINKQR_MAIL_FROM"), c.BaseURL); err != nil {
		return nil, err
	}

	if v := getenv("LINKQR_LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			return nil, &Error{"LINKQR_LOG_LEVEL", v, "must be one of debug, info, warn, error"}
		}
	}
	switch v := strings.ToLower(getenv("LINKQR_LOG_FORMAT")); v {
	case "":
		c.LogFormat = "json"
		if isTerminal {
			c.LogFormat = "text"
		}
	case "text", "json":
		c.LogFormat = v
	default:
		return nil, &Error{"LINKQR_LOG_FORMAT", v, "must be text or json"}
	}
	return c, nil
}

// durationVar reads a Go duration ("2s", "500ms") within [lo, hi].
func durationVar(getenv func(string) string, name string, def, lo, hi time.Duration) (time.Duration, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < lo || d > hi {
		return 0, &Error{name, v, fmt.Sprintf("must be a duration from %v to %v, e.g. %v", lo, hi, def)}
	}
	return d, nil
}

// Embedded reports whether the process runs its own PostgreSQL cluster.
func (c *Config) Embedded() bool { return c.DatabaseURL == "" }

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func checkAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("must be host:port, e.g. 127.0.0.1:8080")
	}
	if host != "" && net.ParseIP(host) == nil && strings.ContainsAny(host, "/ ") {
		return fmt.Errorf("host %q is not a hostname or IP address", host)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("port must be a number from 0 to 65535")
	}
	return nil
}

// dnsServerAddr reports whether addr is host:port of a server one can
// query: a host, and a port from 1 to 65535.
func dnsServerAddr(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	p, perr := strconv.Atoi(port)
	return err == nil && host != "" && checkAddr(addr) == nil && perr == nil && p >= 1
}

// sameListener reports whether two valid listen addresses would collide: the
// same fixed port on the same host, or on a wildcard host (which takes the
// port on every address). Port 0 picks a free port, so it never collides.
func sameListener(a, b string) bool {
	ha, pa, _ := net.SplitHostPort(a)
	hb, pb, _ := net.SplitHostPort(b)
	if pa != pb || pa == "0" {
		return false
	}
	wildcard := func(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }
	return ha == hb || wildcard(ha) || wildcard(hb)
}

// parseOrigin accepts an absolute http(s) URL with a host and no path beyond
// "/", because every public URL linkqr prints is built by appending to it.
func parseOrigin(name, value, def string) (*url.URL, error) {
	raw := value
	if raw == "" {
		raw = def
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &Error{name, value, "must be an absolute http:// or https:// URL, e.g. https://links.example.com"}
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.TrimSuffix(u.Path, "/") != "" {
		return nil, &Error{name, value, "must be an origin (scheme://host[:port]) without user, path, query or fragment"}
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}

func checkDatabaseURL(v string) error {
	if strings.HasPrefix(v, "postgres://") || strings.HasPrefix(v, "postgresql://") {
		if _, err := url.Parse(v); err != nil {
			return fmt.Errorf("not a valid URL")
		}
		return nil
	}
	if strings.Contains(v, "=") { // key=value DSN
		return nil
	}
	return fmt.Errorf("must be a postgres:// URL or a key=value connection string")
}

// redactURL hides a password so configuration errors never print secrets.
func redactURL(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return v
	}
	return u.Redacted()
}

func parseCIDRs(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR such as 10.0.0.0/8 or ::1/128", part)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// FromEnv is Load over the process environment.
func FromEnv(isTerminal bool) (*Config, error) { return Load(os.Getenv, isTerminal) }
