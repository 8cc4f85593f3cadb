package mail_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	netmail "net/mail"
	"strconv"
	"strings"
	"testing"

	"github.com/emersion/go-smtp"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/mail"
	"github.com/linkqr/linkqr/internal/testkit"
)

func smtpConfig(t *testing.T, mb *testkit.Mailbox) config.SMTP {
	t.Helper()
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(mb.URL()[strings.LastIndex(mb.URL(), "@")+1:], "smtp://"))
	p, _ := strconv.Atoi(port)
	return config.SMTP{Host: host, Port: p, Username: mb.User, Password: mb.Password}
}

var from = &netmail.Address{Name: "linkqr", Address: "no-reply@links.example"}

func TestSenderTalksSMTP(t *testing.T) {
	t.Parallel()
	mb := testkit.StartMailbox(t)
	mb.User, mb.Password = "relay", "relay pass"
	s := mail.NewSender(smtpConfig(t, mb), from)
	msg := mail.Message{Kind: "test", To: "ann@example.com", Subject: "Grüße from linkqr",
		Text: "Open https://links.example/x/" + strings.Repeat("a", 90) + "\n", HTML: `<p>Open <a href="https://links.example/x">it</a></p>`}
	if err := s.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	got := mb.Wait("ann@example.com", "Grüße")
	if got.From != "no-reply@links.example" || got.Text != msg.Text || got.HTML != msg.HTML {
		t.Errorf("received from %q\ntext %q\nhtml %q", got.From, got.Text, got.HTML)
	}
	if a := mb.Authenticated(); len(a) != 1 || a[0] != "relay" {
		t.Errorf("AUTH: %v, want relay once", a)
	}
}

func TestWorkerGivesUpOnPermanentRefusal(t *testing.T) {
	t.Parallel()
	mb := testkit.StartMailbox(t)
	key := bytes.Repeat([]byte{7}, 32)
	var logs bytes.Buffer
	w, args := worker(t, mb, key, &logs)
	mb.RefuseWith(&smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"})
	err := w.Work(context.Background(), &river.Job[mail.SendArgs]{JobRow: &rivertype.JobRow{ID: 42, Attempt: 1, MaxAttempts: mail.MaxAttempts}, Args: args})
	var cancel *river.JobCancelError
	if !errors.As(err, &cancel) {
		t.Fatalf("a 550 is %v, want the job cancelled", err)
	}
	mb.RefuseWith(&smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try later"})
	err = w.Work(context.Background(), &river.Job[mail.SendArgs]{JobRow: &rivertype.JobRow{ID: 43, Attempt: 1, MaxAttempts: mail.MaxAttempts}, Args: args})
	if err == nil || errors.As(err, &cancel) {
		t.Fatalf("a 451 is %v, want an error River retries", err)
	}
	mb.RefuseWith(nil)
	if err := w.Work(context.Background(), &river.Job[mail.SendArgs]{JobRow: &rivertype.JobRow{ID: 44, Attempt: 2, MaxAttempts: mail.MaxAttempts}, Args: args}); err != nil {
		t.Fatal(err)
	}
	mb.Wait("bob@example.com", "Reset")
	if out := logs.String(); !strings.Contains(out, "job_id=42") || strings.Contains(out, "tok3n") {
		t.Errorf("logs must name the job and never the link:\n%s", out)
	}
	// A sealed message opens only with its own key.
	other, _ := worker(t, mb, bytes.Repeat([]byte{8}, 32), &logs)
	if err := other.Work(context.Background(), &river.Job[mail.SendArgs]{JobRow: &rivertype.JobRow{ID: 45, Attempt: 1}, Args: args}); !errors.As(err, &cancel) {
		t.Errorf("another key opened the message: %v", err)
	}
}

// worker builds a Worker over mb and the sealed arguments of one message,
// captured through a recording inserter.
func worker(t *testing.T, mb *testkit.Mailbox, key []byte, logs *bytes.Buffer) (*mail.Worker, mail.SendArgs) {
	t.Helper()
	rec := &recorder{}
	box, err := mail.NewOutbox(true, key)
	if err != nil {
		t.Fatal(err)
	}
	box.UseJobs(rec)
	if err := box.Enqueue(context.Background(), nil, mail.Message{Kind: "password_reset", To: "bob@example.com",
		Subject: "Reset your password", Text: "https://links.example/password/reset/tok3n"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(rec.args.Sealed), "tok3n") {
		t.Fatal("the job arguments hold the link in the clear")
	}
	w := &mail.Worker{Outbox: box, Sender: mail.NewSender(smtpConfig(t, mb), from), Log: slog.New(slog.NewTextHandler(logs, nil))}
	return w, rec.args
}

type recorder struct{ args mail.SendArgs }

func (r *recorder) InsertTx(_ context.Context, _ pgx.Tx, args river.JobArgs, _ *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	r.args = args.(mail.SendArgs)
	return &rivertype.JobInsertResult{}, nil
}
