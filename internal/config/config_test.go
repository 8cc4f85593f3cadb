package config

import (
	"os"
	"strings"
	"testing"
	"time"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	c, err := Load(env(), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || c.BaseURL.String() != "http://127.0.0.1:8080" || c.ShortBaseURL.String() != c.BaseURL.String() {
		t.Errorf("addr/base defaults: %q %q %q", c.Addr, c.BaseURL, c.ShortBaseURL)
	}
	if !c.Embedded() || c.DataDir != "./var" || c.DataDirSet || c.LogFormat != "json" || c.WebhookAllowPrivate || c.RedisURL != "" || c.MetricsAddr != "127.0.0.1:9090" {
		t.Errorf("defaults: %+v", c)
	}
	c, err = Load(env(), true)
	if err != nil || c.LogFormat != "text" {
		t.Errorf("terminal default format = %q, %v; want text", c.LogFormat, err)
	}
}

func TestLoadValues(t *testing.T) {
	t.Parallel()
	c, err := Load(env(
		"LINKQR_ADDR", "0.0.0.0:9000",
		"LINKQR_BASE_URL", "https://app.example.com/",
		"LINKQR_SHORT_BASE_URL", "https://qr.example",
		"LINKQR_DATABASE_URL", "postgres://u:p@db/linkqr",
		"LINKQR_DATA_DIR", "/srv/linkqr",
		"LINKQR_SECRET_KEY", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
		"LINKQR_TRUSTED_PROXIES", "10.0.0.0/8, 2001:db8::/32",
		"LINKQR_WEBHOOK_ALLOW_PRIVATE", "true",
		"LINKQR_LOG_LEVEL", "debug",
		"LINKQR_LOG_FORMAT", "TEXT",
		"LINKQR_METRICS_ADDR", "10.0.0.5:9100",
		"LINKQR_DNS_RESOLVER", "127.0.0.1:5353",
	), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL.String() != "https://app.example.com" || c.ShortBaseURL.String() != "https://qr.example" {
		t.Errorf("urls: %s %s", c.BaseURL, c.ShortBaseURL)
	}
	if c.DataDir != "/srv/linkqr" || !c.DataDirSet {
		t.Errorf("data dir: %q set=%v", c.DataDir, c.DataDirSet)
	}
	if c.Roles != AllRoles || c.DatabaseDirectURL != "" || c.DatabaseReadURL != "" || c.ReadMaxLag != 30*time.Second {
		t.Errorf("database defaults: roles %s, direct %q, read %q, max lag %v", c.Roles, c.DatabaseDirectURL, c.DatabaseReadURL, c.ReadMaxLag)
	}
	if c.DNSResolver != "127.0.0.1:5353" {
		t.Errorf("dns resolver %q", c.DNSResolver)
	}
	if c.MetricsAddr != "10.0.0.5:9100" {
		t.Errorf("metrics addr %q", c.MetricsAddr)
	}
	if c.Embedded() || len(c.SecretKey) != 32 || len(c.TrustedProxies) != 2 || !c.WebhookAllowPrivate || c.LogFormat != "text" || c.LogLevel.String() != "DEBUG" {
		t.Errorf("values: %+v", c)
	}
}

func TestLoadErrorsNameTheVariable(t *testing.T) {
	t.Parallel()
	cases := []struct{ key, value string }{
		{"LINKQR_ADDR", "8080"},
		{"LINKQR_ADDR", "localhost:http"},
		{"LINKQR_ADDR", "127.0.0.1:70000"},
		{"LINKQR_BASE_URL", "example.com"},
		{"LINKQR_BASE_URL", "ftp://example.com"},
		{"LINKQR_BASE_URL", "https://example.com/app"},
		{"LINKQR_BASE_URL", "https://user@example.com"},
		{"LINKQR_SHORT_BASE_URL", "/relative"},
		{"LINKQR_DATABASE_URL", "mysql://x"},
		{"LINKQR_SECRET_KEY", "not base64!!"},
		{"LINKQR_SECRET_KEY", "c2hvcnQ="},
		{"LINKQR_REDIS_URL", "http://localhost:6379"},
		{"LINKQR_TRUSTED_PROXIES", "10.0.0.0/33"},
		{"LINKQR_WEBHOOK_ALLOW_PRIVATE", "maybe"},
		{"LINKQR_LOG_LEVEL", "loud"},
		{"LINKQR_LOG_FORMAT", "xml"},
		{"LINKQR_METRICS_ADDR", "9090"},
		{"LINKQR_METRICS_ADDR", "127.0.0.1:99999"},
		{"LINKQR_METRICS_ADDR", "127.0.0.1:8080"},         // LINKQR_ADDR's default
		{"LINKQR_METRICS_ADDR", ":8080"},                  // a wildcard host takes the port everywhere
		{"LINKQR_METRICS_ADDR", "OFF"},                    // "off" is spelt in lower case only
		{"LINKQR_DATABASE_DIRECT_URL", "postgres://db/x"}, // without LINKQR_DATABASE_URL
		{"LINKQR_DATABASE_READ_URL", "postgres://db/x"},
		{"LINKQR_READ_MAX_LAG", "10ms"},
		{"LINKQR_READ_MAX_LAG", "soon"},
		{"LINKQR_DNS_RESOLVER", "127.0.0.1"},
		{"LINKQR_DNS_RESOLVER", ":53"},
		{"LINKQR_DNS_RESOLVER", "127.0.0.1:0"},
		{"LINKQR_ROLES", "edge"},
		{"LINKQR_COUNTRY_HEADER", "CF IPCountry"},
		{"LINKQR_COUNTRY_HEADER", "X-Country:"},
		{"LINKQR_GEOIP_DB", "/nonexistent/GeoLite2-Country.mmdb"},
		{"LINKQR_GEOIP_DB", "/"},
		{"LINKQR_GEOIP_DB", "OFF"},
		{"LINKQR_ROLES", "api,"},
		{"LINKQR_CUSTOM_DOMAIN_TARGET", "localhost"},
		{"LINKQR_CUSTOM_DOMAIN_TARGET", "https://links.example.net"},
		{"LINKQR_CUSTOM_DOMAIN_TARGET", "192.0.2.10, links.example.net"},
		{"LINKQR_CUSTOM_DOMAIN_TARGET", "192.0.2.10,"},
		{"LINKQR_CUSTOM_DOMAIN_TARGET", "0.0.0.0"},
		{"LINKQR_CUSTOM_DOMAIN_TARGET", "fe80::1%eth0"},
		{"LINKQR_CUSTOM_DOMAIN_TARGET", "  "},
	}
	for _, tc := range cases {
		_, err := Load(env(tc.key, tc.value), false)
		if err == nil {
			t.Errorf("%s=%q: no error", tc.key, tc.value)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, tc.key+"=") || strings.Contains(msg, "\n") {
			t.Errorf("%s=%q: error %q must be one line starting with the variable", tc.key, tc.value, msg)
		}
	}
}

// TestMetricsAddrBesideAddr accepts a metrics listener that cannot collide
// with the main one: another port, another host, or free ports (tests).
func TestMetricsAddrBesideAddr(t *testing.T) {
	t.Parallel()
	for _, kv := range [][2]string{
		{"127.0.0.1:8080", "127.0.0.1:9090"},
		{"127.0.0.1:8080", "10.0.0.5:8080"},
		{"127.0.0.1:0", "127.0.0.1:0"},
		{"[::1]:8080", "[::1]:9090"},
	} {
		c, err := Load(env("LINKQR_ADDR", kv[0], "LINKQR_METRICS_ADDR", kv[1]), false)
		if err != nil || c.MetricsAddr != kv[1] {
			t.Errorf("LINKQR_ADDR=%s LINKQR_METRICS_ADDR=%s: %v", kv[0], kv[1], err)
		}
	}
}

// TestMetricsAddrDefaultAndOff: unset or empty is loopback port 9090,
// "off" runs no listener, and the default yields to a LINKQR_ADDR on its
// port with an error that says how to move it.
func TestMetricsAddrDefaultAndOff(t *testing.T) {
	t.Parallel()
	for _, e := range []func(string) string{env(), env("LINKQR_METRICS_ADDR", "")} {
		if c, err := Load(e, false); err != nil || c.MetricsAddr != "127.0.0.1:9090" {
			t.Errorf("default metrics addr %q, %v; want 127.0.0.1:9090", c.MetricsAddr, err)
		}
	}
	if c, err := Load(env("LINKQR_METRICS_ADDR", "off"), false); err != nil || c.MetricsAddr != "" {
		t.Errorf("LINKQR_METRICS_ADDR=off: %q, %v; want no listener", c.MetricsAddr, err)
	}
	_, err := Load(env("LINKQR_ADDR", "0.0.0.0:9090"), false)
	if err == nil || !strings.HasPrefix(err.Error(), "LINKQR_METRICS_ADDR=") || !strings.Contains(err.Error(), `"off"`) {
		t.Errorf("LINKQR_ADDR on the default metrics port: %v", err)
	}
}

// TestCustomDomainTarget: a hostname is a CNAME target, a list of
// addresses the A/AAAA values (canonical, unique, IPv4 first); unset, the
// host of LINKQR_BASE_URL, a name or an address.
func TestCustomDomainTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env        []string
		name       string
		addrs, str string
	}{
		{[]string{"LINKQR_CUSTOM_DOMAIN_TARGET", "Links.Example.NET."}, "links.example.net", "", "links.example.net"},
		{[]string{"LINKQR_CUSTOM_DOMAIN_TARGET", " 2001:db8::10, 192.0.2.10,::ffff:192.0.2.10 "}, "", "192.0.2.10 2001:db8::10", "192.0.2.10,2001:db8::10"},
		{[]string{"LINKQR_BASE_URL", "https://app.example.com"}, "app.example.com", "", "app.example.com"},
		{nil, "", "127.0.0.1", "127.0.0.1"}, // the default LINKQR_BASE_URL, http://127.0.0.1:8080
		{[]string{"LINKQR_BASE_URL", "http://[::1]:8080"}, "", "::1", "::1"},
		{[]string{"LINKQR_BASE_URL", "http://localhost:8080"}, "localhost", "", "localhost"},
	} {
		c, err := Load(env(tc.env...), false)
		if err != nil {
			t.Errorf("%v: %v", tc.env, err)
			continue
		}
		target := c.CustomDomainTarget
		name, _ := target.Name()
		var addrs []string
		for _, a := range target.Addrs() {
			addrs = append(addrs, a.String())
		}
		if name != tc.name || strings.Join(addrs, " ") != tc.addrs || target.String() != tc.str {
			t.Errorf("%v: name %q, addrs %v, %q", tc.env, name, addrs, target.String())
		}
	}
}

func TestSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	_, err := Load(env("LINKQR_DATABASE_URL", "postgres://user:hunter2@db:99999999/x?%zz"), false)
	if err != nil && strings.Contains(err.Error(), "hunter2") {
		t.Errorf("password leaked: %v", err)
	}
	_, err = Load(env("LINKQR_SECRET_KEY", "c2VjcmV0LXRvby1zaG9ydA=="), false)
	if err == nil || strings.Contains(err.Error(), "c2VjcmV0") {
		t.Errorf("secret key leaked or accepted: %v", err)
	}
}

func TestEnsureSecretKeyPersists(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c1, _ := Load(env("LINKQR_DATA_DIR", dir), false)
	k1, err := c1.EnsureSecretKey()
	if err != nil || len(k1) != 32 {
		t.Fatalf("first key: %v (%d bytes)", err, len(k1))
	}
	c2, _ := Load(env("LINKQR_DATA_DIR", dir), false)
	k2, err := c2.EnsureSecretKey()
	if err != nil || string(k1) != string(k2) {
		t.Fatalf("second start must read the same key: %v", err)
	}
	if a, b := DeriveKey(k1, "session"), DeriveKey(k1, "webhook"); string(a) == string(b) || len(a) != 32 {
		t.Errorf("derived keys must differ per purpose")
	}
}

func TestLoadMail(t *testing.T) {
	t.Parallel()
	c, err := Load(env("LINKQR_BASE_URL", "https://links.example.com:8443"), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.SMTP.Enabled() || c.MailFrom.String() != `"linkqr" <no-reply@links.example.com>` {
		t.Errorf("defaults: smtp %+v, from %s", c.SMTP, c.MailFrom)
	}
	c, err = Load(env("LINKQR_SMTP_URL", "smtp://ann:s3cret@mail.example.com:587", "LINKQR_MAIL_FROM", "Links <links@example.com>"), false)
	if err != nil {
		t.Fatal(err)
	}
	want := SMTP{Host: "mail.example.com", Port: 587, Username: "ann", Password: "s3cret"}
	if c.SMTP != want || c.SMTP.Loopback() || c.MailFrom.Address != "links@example.com" || c.MailFrom.Name != "Links" {
		t.Errorf("values: smtp %+v, from %s", c.SMTP, c.MailFrom)
	}
	c, err = Load(env("LINKQR_SMTP_URL", "smtps://127.0.0.1"), false)
	if err != nil || c.SMTP != (SMTP{Host: "127.0.0.1", Port: 465, Implicit: true}) || !c.SMTP.Loopback() {
		t.Errorf("smtps default port: %+v, %v", c.SMTP, err)
	}
	for _, bad := range []struct{ key, value string }{
		{"LINKQR_SMTP_URL", "http://mail.example.com"},
		{"LINKQR_SMTP_URL", "smtp://"},
		{"LINKQR_SMTP_URL", "smtp://mail.example.com:0"},
		{"LINKQR_SMTP_URL", "smtp://mail.example.com/path"},
		{"LINKQR_MAIL_FROM", "not an address"},
	} {
		_, err := Load(env(bad.key, bad.value), false)
		if err == nil || !strings.Contains(err.Error(), bad.key) {
			t.Errorf("%s=%q: err %v, want one naming the variable", bad.key, bad.value, err)
		}
	}
	_, err = Load(env("LINKQR_SMTP_URL", "ftp://ann:hunter2hunter2@mail.example.com"), false)
	if err == nil || strings.Contains(err.Error(), "hunter2hunter2") {
		t.Errorf("the SMTP password is printed: %v", err)
	}
}

// TestLoadScaleOut: roles, the direct URL beside PgBouncer's and the
// replica with its lag bound.
func TestLoadScaleOut(t *testing.T) {
	t.Parallel()
	c, err := Load(env(
		"LINKQR_DATABASE_URL", "postgres://u:p@pgbouncer:6432/linkqr?default_query_exec_mode=cache_describe",
		"LINKQR_DATABASE_DIRECT_URL", "postgres://u:p@primary:5432/linkqr",
		"LINKQR_DATABASE_READ_URL", "postgres://u:p@replica:5432/linkqr",
		"LINKQR_READ_MAX_LAG", "5s",
		"LINKQR_ROLES", "redirect, API",
	), false)
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseDirectURL != "postgres://u:p@primary:5432/linkqr" || c.DatabaseReadURL != "postgres://u:p@replica:5432/linkqr" || c.ReadMaxLag != 5*time.Second {
		t.Errorf("urls: direct %q, read %q, lag %v", c.DatabaseDirectURL, c.DatabaseReadURL, c.ReadMaxLag)
	}
	if !c.Roles.Redirect() || !c.Roles.API() || c.Roles.Worker() || c.Roles.String() != "redirect,api" {
		t.Errorf("roles %s", c.Roles)
	}
}

func TestParseRoles(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "all", "all": "all", "worker": "worker", "api,redirect": "redirect,api", "redirect,api,worker": "all", "worker,all": "all"} {
		r, err := ParseRoles(in)
		if err != nil || r.String() != want {
			t.Errorf("ParseRoles(%q) = %s, %v; want %s", in, r, err, want)
		}
	}
	_, err := ParseRoles("redirect,cron")
	if err == nil || !strings.Contains(err.Error(), `"cron"`) || !strings.Contains(err.Error(), RoleNames) {
		t.Errorf("unknown role: %v", err)
	}
}

// TestGeo: the country header and the IP-to-country source, with the
// built-in data by default.
func TestGeo(t *testing.T) {
	t.Parallel()
	c, err := Load(env(), false)
	if err != nil || c.Geo != (Geo{}) {
		t.Fatalf("default geo %+v, %v; want the built-in data and no header", c.Geo, err)
	}
	db := t.TempDir() + "/country.mmdb"
	if err := os.WriteFile(db, []byte("not checked here"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = Load(env("LINKQR_COUNTRY_HEADER", "CF-IPCountry", "LINKQR_GEOIP_DB", db), false)
	if err != nil || c.Geo.CountryHeader != "CF-IPCountry" || c.Geo.DB != db || c.Geo.Off {
		t.Errorf("geo %+v, %v", c.Geo, err)
	}
	c, err = Load(env("LINKQR_GEOIP_DB", "off"), false)
	if err != nil || !c.Geo.Off || c.Geo.DB != "" {
		t.Errorf("off: %+v, %v", c.Geo, err)
	}
}
