package config

import (
	"net"
	"net/mail"
	"net/url"
	"strconv"
)

// SMTP is LINKQR_SMTP_URL, parsed: where linkqr hands its e-mail over.
// The zero value (no URL) means e-mail is off.
type SMTP struct {
	Host     string
	Port     int
	Username string
	Password string
	// Implicit is smtps://: TLS from the first byte. Otherwise STARTTLS is
	// used whenever the server offers it, and required before AUTH on a
	// host that is not loopback, so credentials never cross a network in
	// the clear.
	Implicit bool
}

// Enabled reports whether e-mail is configured.
func (s SMTP) Enabled() bool { return s.Host != "" }

// Loopback reports whether the server is on this machine (a local relay).
func (s SMTP) Loopback() bool {
	if s.Host == "localhost" {
		return true
	}
	ip := net.ParseIP(s.Host)
	return ip != nil && ip.IsLoopback()
}

// parseSMTP reads smtp://[user:pass@]host[:port] or smtps://…; the port
// defaults to 25 (smtp) or 465 (smtps).
func parseSMTP(v string) (SMTP, error) {
	const want = "must be smtp://[user:pass@]host:port or smtps://[user:pass@]host:port"
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return SMTP{}, &Error{"LINKQR_SMTP_URL", redactURL(v), want}
	}
	s := SMTP{Host: u.Hostname(), Implicit: u.Scheme == "smtps", Port: 25}
	if s.Implicit {
		s.Port = 465
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return SMTP{}, &Error{"LINKQR_SMTP_URL", redactURL(v), "port must be a number from 1 to 65535"}
		}
		s.Port = n
	}
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
	}
	return s, nil
}

// parseMailFrom reads LINKQR_MAIL_FROM (an address, optionally with a
// display name); the default is "linkqr <no-reply@host of the base URL>".
func parseMailFrom(v string, base *url.URL) (*mail.Address, error) {
	if v == "" {
		return &mail.Address{Name: "linkqr", Address: "no-reply@" + base.Hostname()}, nil
	}
	addr, err := mail.ParseAddress(v)
	if err != nil {
		return nil, &Error{"LINKQR_MAIL_FROM", v, "must be an e-mail address such as linkqr <no-reply@example.com>"}
	}
	return addr, nil
}
