package mail

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Queue is the River queue of outgoing mail; Workers bounds how many SMTP
// conversations one instance holds at a time.
const (
	Queue   = "mail"
	Workers = 4
	// MaxAttempts spreads retries over about half a day with River's
	// backoff (attempt⁴ seconds), enough to outlast a mail server's
	// maintenance window.
	MaxAttempts = 12
)

// JobInserter enqueues River jobs on a caller's transaction;
// *river.Client[pgx.Tx] is one.
type JobInserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Outbox queues messages. Without LINKQR_SMTP_URL it is disabled: Enqueue
// is then never called, and no page claims that a message was sent.
type Outbox struct {
	enabled bool
	jobs    JobInserter
	aead    cipher.AEAD
}

// NewOutbox returns an Outbox sealing messages with key (32 bytes, derived
// from LINKQR_SECRET_KEY); enabled is whether LINKQR_SMTP_URL is set.
func NewOutbox(enabled bool, key []byte) (*Outbox, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	return &Outbox{enabled: enabled, aead: aead}, nil
}

// UseJobs sets the River client messages are queued with. It is separate
// from NewOutbox because the client needs the Worker, which needs the
// Outbox.
func (o *Outbox) UseJobs(j JobInserter) { o.jobs = j }

// Enabled reports whether messages are sent at all.
func (o *Outbox) Enabled() bool { return o != nil && o.enabled }

// Enqueue queues m in tx: it is sent once tx commits, and never if it
// rolls back.
func (o *Outbox) Enqueue(ctx context.Context, tx pgx.Tx, m Message) error {
	if !o.Enabled() || o.jobs == nil {
		return errors.New("mail: e-mail is not configured")
	}
	plain, err := json.Marshal(m)
	if err != nil {
		return err
	}
	nonce := make([]byte, o.aead.NonceSize())
	_, _ = rand.Read(nonce)
	args := SendArgs{Message: m.Kind, Sealed: o.aead.Seal(nonce, nonce, plain, []byte(m.Kind))}
	if _, err := o.jobs.InsertTx(ctx, tx, args, nil); err != nil {
		return fmt.Errorf("queue %s mail: %w", m.Kind, err)
	}
	return nil
}

func (o *Outbox) open(args SendArgs) (Message, error) {
	n := o.aead.NonceSize()
	if len(args.Sealed) < n {
		return Message{}, errors.New("mail job: sealed message too short")
	}
	plain, err := o.aead.Open(nil, args.Sealed[:n], args.Sealed[n:], []byte(args.Message))
	if err != nil {
		return Message{}, errors.New("mail job: the message does not decrypt (was LINKQR_SECRET_KEY changed?)")
	}
	var m Message
	if err := json.Unmarshal(plain, &m); err != nil {
		return Message{}, fmt.Errorf("mail job: %w", err)
	}
	return m, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("mail key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// SendArgs is the job of one message: its kind in the clear (for logs and
// River's UI), everything else sealed.
type SendArgs struct {
	Message string `json:"message"` // Message.Kind
	Sealed  []byte `json:"sealed"`
}

// Kind is River's name of the job.
func (SendArgs) Kind() string { return "mail_send" }

// InsertOpts puts mail on its own queue with its retry budget.
func (SendArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: MaxAttempts}
}

// Worker sends queued messages.
type Worker struct {
	river.WorkerDefaults[SendArgs]
	Outbox *Outbox
	Sender interface {
		Send(context.Context, Message) error
	}
	Log *slog.Logger
}

// Work sends one message. A failure is retried with River's backoff; the
// last attempt's failure, or one the server calls permanent, is logged with
// the job id and the kind — never the message, whose links are secrets.
func (w *Worker) Work(ctx context.Context, job *river.Job[SendArgs]) error {
	m, err := w.Outbox.open(job.Args)
	if err != nil {
		w.Log.Error("mail not sent", "job_id", job.ID, "kind", job.Args.Message, "err", err)
		return river.JobCancel(err)
	}
	err = w.Sender.Send(ctx, m)
	if err == nil {
		w.Log.Info("mail sent", "job_id", job.ID, "kind", m.Kind, "attempt", job.Attempt)
		return nil
	}
	if permanent(err) {
		w.Log.Error("mail not sent: the server refused it", "job_id", job.ID, "kind", m.Kind, "attempt", job.Attempt, "err", err)
		return river.JobCancel(err)
	}
	if job.Attempt >= job.MaxAttempts {
		w.Log.Error("mail not sent: giving up", "job_id", job.ID, "kind", m.Kind, "attempt", job.Attempt, "err", err)
	} else {
		w.Log.Warn("mail not sent; will retry", "job_id", job.ID, "kind", m.Kind, "attempt", job.Attempt, "err", err)
	}
	return err
}
