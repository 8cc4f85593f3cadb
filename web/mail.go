package web

import (
	"bytes"
	"context"
	"strings"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/mail"
)

// mailView is what one e-mail says; mailHTML and mailText lay it out.
type mailView struct {
	Subject    string
	Paragraphs []string
	Action     string // the button's words
	Link       string
	Footer     []string
}

// ComposeNotice turns an account notice into the e-mail sent for it: a
// plain-text part holding the absolute link, and an HTML alternative
// rendered with templ.
func ComposeNotice(n account.Notice) mail.Message {
	var v mailView
	switch n.Kind {
	case account.NoticeInvitation:
		who := "An admin"
		if n.InvitedBy != "" {
			who = n.InvitedBy
		}
		v = mailView{
			Subject:    "Join " + n.Workspace + " on linkqr",
			Paragraphs: []string{who + " invited you to join the workspace “" + n.Workspace + "” on linkqr as " + article(n.Role) + "."},
			Action:     "Accept the invitation",
			Link:       n.Link,
			Footer: []string{"The link works once, until " + formatTime(n.Expires) + ". You can sign in or create an account with this address on the page it opens.",
				"If you did not expect this invitation, ignore this message: nothing happens unless you accept."},
		}
	case account.NoticePasswordReset:
		v = mailView{
			Subject:    "Reset your linkqr password",
			Paragraphs: []string{"Someone (we hope you) asked to reset the password of the linkqr account of this address."},
			Action:     "Choose a new password",
			Link:       n.Link,
			Footer: []string{"The link works once, for 60 minutes. Setting a new password signs the account out everywhere.",
				"If you did not ask for this, ignore this message: your password stays as it is."},
		}
	default: // account.NoticeSignUpAttempt
		v = mailView{
			Subject: "Someone tried to sign up with your address on linkqr",
			Paragraphs: []string{"Someone just tried to create a linkqr account with this address. It already has an account, so nothing was changed.",
				"If it was you, sign in with your password, or reset it if you forgot it."},
			Action: "Reset your password",
			Link:   n.Link,
			Footer: []string{"If it was not you, you can ignore this message: nobody can use your account without your password."},
		}
	}
	var html bytes.Buffer
	if err := mailHTML(v).Render(context.Background(), &html); err != nil {
		html.Reset() // the text part carries the message on its own
	}
	return mail.Message{Kind: string(n.Kind), To: n.To, Subject: v.Subject, Text: mailText(v), HTML: html.String()}
}

// mailText is the plain-text part: the same words, the link on a line of
// its own.
func mailText(v mailView) string {
	var b strings.Builder
	for _, p := range v.Paragraphs {
		b.WriteString(p + "\n\n")
	}
	b.WriteString(v.Action + ":\n" + v.Link + "\n\n")
	for _, p := range v.Footer {
		b.WriteString(p + "\n\n")
	}
	b.WriteString("-- \nlinkqr\n")
	return b.String()
}
