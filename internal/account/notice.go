package account

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// NoticeKind names an e-mail the account service sends.
type NoticeKind string

// The e-mails of the account service.
const (
	NoticeInvitation    NoticeKind = "invitation"
	NoticePasswordReset NoticeKind = "password_reset"
	NoticeSignUpAttempt NoticeKind = "signup_attempt"
)

// Notice is an e-mail to send: what it says, not how it looks. The app
// composes it (templ, in web) and queues it (internal/mail) in the
// transaction given, so it leaves only if the change commits.
type Notice struct {
	Kind      NoticeKind
	To        string
	Link      string // absolute, on LINKQR_BASE_URL; carries the token when there is one
	Workspace string // invitation: the workspace's name
	InvitedBy string // invitation: the inviting admin's address
	Role      Role
	Expires   time.Time
}

// Mailer queues a notice in tx.
type Mailer func(ctx context.Context, tx pgx.Tx, n Notice) error

// UseMail turns e-mail on: send queues a message in a transaction, jobs
// queues the forgot-password lookups. Without it (no LINKQR_SMTP_URL)
// nothing is ever mailed and MailEnabled is false.
func (s *Service) UseMail(send Mailer, jobs JobInserter) { s.mail, s.jobs = send, jobs }

// MailEnabled reports whether the service sends e-mail.
func (s *Service) MailEnabled() bool { return s.mail != nil }

// notify queues n when e-mail is on; it reports whether it did.
func (s *Service) notify(ctx context.Context, tx pgx.Tx, n Notice) (bool, error) {
	if s.mail == nil {
		return false, nil
	}
	return true, s.mail(ctx, tx, n)
}
