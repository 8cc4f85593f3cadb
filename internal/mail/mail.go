// Package mail sends linkqr's e-mail: invitations, password resets and
// account notices. A message is queued as a River job in the transaction of
// the change that causes it, so a request never waits on the mail server, a
// message survives a restart, and a failed hand-over is retried with
// backoff. The job's arguments hold the message sealed (AES-256-GCM under a
// key derived from LINKQR_SECRET_KEY): the links in it carry single-use
// tokens, which must not sit readable in the job table or its logs.
package mail

import (
	"context"
	"fmt"
	netmail "net/mail"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/linkqr/linkqr/internal/config"
)

// Message is one e-mail: a plain-text part (always; it holds every link in
// full) and an HTML alternative.
type Message struct {
	Kind    string `json:"kind"` // what it is, for logs: invitation, password_reset, signup_attempt
	To      string `json:"to"`
	Subject string `json:"subject"`
	Text    string `json:"text"`
	HTML    string `json:"html"`
}

// Sender hands messages to the SMTP server of LINKQR_SMTP_URL.
type Sender struct {
	cfg     config.SMTP
	from    *netmail.Address
	timeout time.Duration
}

// NewSender returns a Sender; from is LINKQR_MAIL_FROM.
func NewSender(cfg config.SMTP, from *netmail.Address) *Sender {
	return &Sender{cfg: cfg, from: from, timeout: 30 * time.Second}
}

// Send delivers m in one SMTP conversation: STARTTLS when the server offers
// it (required before AUTH unless the server is on loopback), or implicit
// TLS for smtps://.
func (s *Sender) Send(ctx context.Context, m Message) error {
	msg, err := s.compose(m)
	if err != nil {
		return err
	}
	opts := []gomail.Option{gomail.WithPort(s.cfg.Port), gomail.WithTimeout(s.timeout), gomail.WithTLSPolicy(gomail.TLSOpportunistic)}
	switch {
	case s.cfg.Implicit:
		opts = append(opts, gomail.WithSSL())
	case s.cfg.Username != "" && !s.cfg.Loopback():
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	if s.cfg.Username != "" {
		auth := gomail.SMTPAuthAutoDiscover // the strongest the server offers, over TLS
		if s.cfg.Loopback() && !s.cfg.Implicit {
			// A local relay often has no certificate: PLAIN without TLS is
			// acceptable on loopback, where nothing crosses a network.
			auth = gomail.SMTPAuthPlainNoEnc
		}
		opts = append(opts, gomail.WithSMTPAuth(auth),
			gomail.WithUsername(s.cfg.Username), gomail.WithPassword(s.cfg.Password))
	}
	client, err := gomail.NewClient(s.cfg.Host, opts...)
	if err != nil {
		return fmt.Errorf("mail client: %w", err)
	}
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("send %s mail: %w", m.Kind, err)
	}
	return nil
}

func (s *Sender) compose(m Message) (*gomail.Msg, error) {
	msg := gomail.NewMsg()
	msg.FromMailAddress(s.from)
	if err := msg.To(m.To); err != nil {
		return nil, fmt.Errorf("%s mail: recipient: %w", m.Kind, err)
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	msg.SetMessageID()
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	return msg, nil
}
