package testkit

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// Mail is one message as the SMTP server received it, decoded.
type Mail struct {
	From    string // envelope sender
	To      []string
	Header  netmail.Header
	Subject string
	Text    string // the text/plain part, decoded
	HTML    string // the text/html part, decoded
	Raw     string
}

// Mailbox is a real SMTP server in-process (emersion/go-smtp) that keeps
// every message it accepts. Point LINKQR_SMTP_URL at URL().
type Mailbox struct {
	t    testing.TB
	addr string
	// User and Password, when set, are required through AUTH PLAIN.
	User, Password string

	mu    sync.Mutex
	mails []Mail
	auths []string // usernames that authenticated
	// Refuse, when set, answers DATA with this error (e.g. a 4xx or 5xx).
	refuse error
}

// StartMailbox starts the SMTP server on a loopback port; it stops when the
// test ends.
func StartMailbox(t testing.TB) *Mailbox {
	t.Helper()
	mb := &Mailbox{t: t}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &smtpSession{mb: mb}, nil }))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testkit: smtp listen: %v", err)
	}
	mb.addr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return mb
}

// URL is the LINKQR_SMTP_URL of this server.
func (mb *Mailbox) URL() string {
	if mb.User != "" {
		return "smtp://" + mb.User + ":" + mb.Password + "@" + mb.addr
	}
	return "smtp://" + mb.addr
}

// RefuseWith makes the server answer every message with err (nil accepts
// again).
func (mb *Mailbox) RefuseWith(err error) {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	mb.refuse = err
}

// All returns the messages received so far.
func (mb *Mailbox) All() []Mail {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return append([]Mail(nil), mb.mails...)
}

// Authenticated lists the usernames that signed in with AUTH.
func (mb *Mailbox) Authenticated() []string {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return append([]string(nil), mb.auths...)
}

// Wait polls until a message to the address whose subject contains
// subject has arrived, and returns the newest such one; it fails the test
// after 15 s.
func (mb *Mailbox) Wait(to, subject string) Mail {
	mb.t.Helper()
	var found Mail
	wait.Until(mb.t, 15*time.Second, func() (bool, string) {
		all := mb.All()
		for i := len(all) - 1; i >= 0; i-- {
			m := all[i]
			for _, rcpt := range m.To {
				if strings.EqualFold(rcpt, to) && strings.Contains(m.Subject, subject) {
					found = m
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("testkit: no mail to %s about %q; got %d other(s)", to, subject, len(all))
	})
	return found
}

// To returns the messages received for the address so far.
func (mb *Mailbox) To(addr string) []Mail {
	var out []Mail
	for _, m := range mb.All() {
		for _, rcpt := range m.To {
			if strings.EqualFold(rcpt, addr) {
				out = append(out, m)
			}
		}
	}
	return out
}

type smtpSession struct {
	mb   *Mailbox
	from string
	to   []string
	auth bool
}

func (s *smtpSession) AuthMechanisms() []string {
	if s.mb.User == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *smtpSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.mb.User || pass != s.mb.Password {
			return errors.New("invalid credentials")
		}
		s.auth = true
		s.mb.mu.Lock()
		s.mb.auths = append(s.mb.auths, user)
		s.mb.mu.Unlock()
		return nil
	}), nil
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.mb.User != "" && !s.auth {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.mb.mu.Lock()
	refuse := s.mb.refuse
	s.mb.mu.Unlock()
	if refuse != nil {
		return refuse
	}
	m, err := decodeMail(string(raw))
	if err != nil {
		s.mb.t.Errorf("testkit: a message does not decode: %v\n%s", err, raw)
		return err
	}
	m.From, m.To = s.from, append([]string(nil), s.to...)
	s.mb.mu.Lock()
	s.mb.mails = append(s.mb.mails, m)
	s.mb.mu.Unlock()
	return nil
}

func (s *smtpSession) Reset()        { s.from, s.to = "", nil }
func (s *smtpSession) Logout() error { return nil }

// decodeMail parses a MIME message into its headers and its text and HTML
// parts, undoing the transfer encodings.
func decodeMail(raw string) (Mail, error) {
	msg, err := netmail.ReadMessage(strings.NewReader(raw))
	if err != nil {
		return Mail{}, err
	}
	m := Mail{Header: msg.Header, Raw: raw}
	dec := new(mime.WordDecoder)
	if m.Subject, err = dec.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		return Mail{}, err
	}
	err = decodePart(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body, &m)
	return m, err
}

func decodePart(contentType, encoding string, body io.Reader, m *Mail) error {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return err
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := decodePart(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p, m); err != nil {
				return err
			}
		}
	}
	switch strings.ToLower(encoding) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64Reader(body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	text := strings.ReplaceAll(string(b), "\r\n", "\n") // SMTP's line ends
	switch mt {
	case "text/plain":
		m.Text = text
	case "text/html":
		m.HTML = text
	}
	return nil
}

func base64Reader(r io.Reader) io.Reader {
	return base64.NewDecoder(base64.StdEncoding, newlineStripper{r})
}

// newlineStripper drops the line breaks of a base64 body.
type newlineStripper struct{ r io.Reader }

func (n newlineStripper) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	j := 0
	for _, c := range p[:k] {
		if c != '\r' && c != '\n' {
			p[j] = c
			j++
		}
	}
	return j, err
}
