package domain

import (
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/certs"
	"github.com/linkqr/linkqr/internal/hostname"
)

// TestCertificateCheck: every state internal/certs reports becomes the
// check's state and a sentence saying what to expect.
func TestCertificateCheck(t *testing.T) {
	t.Parallel()
	h, err := hostname.Parse("go.acme-shop.com")
	if err != nil {
		t.Fatal(err)
	}
	pending := Domain{Hostname: h, Status: StatusPending}
	verified := Domain{Hostname: h, Status: StatusVerified}
	at := time.Date(2026, 11, 28, 14, 3, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		d      Domain
		st     certs.Status
		state  CheckState
		detail string
	}{
		{"valid", verified, certs.Status{State: certs.StateValid, NotAfter: at.AddDate(0, 3, 0), Issuer: "Pebble Intermediate CA 5d9a0b"},
			CheckOK, "Valid until 28 Feb 2027, 14:03 UTC, issued by Pebble Intermediate CA 5d9a0b."},
		{"being obtained", verified, certs.Status{State: certs.StateObtaining, At: at},
			CheckPending, "Being obtained from the certificate authority since 28 Nov 2026, 14:03 UTC."},
		{"failed", verified, certs.Status{State: certs.StateFailed, At: at, Reason: "the CA could not validate go.acme-shop.com (http-01: Connection refused)."},
			CheckFailed, "The last attempt, on 28 Nov 2026, 14:03 UTC, failed: the CA could not validate go.acme-shop.com (http-01: Connection refused). The next HTTPS visit to go.acme-shop.com, a minute later at the earliest, tries again."},
		{"expired", verified, certs.Status{State: certs.StateExpired, NotAfter: at},
			CheckFailed, "Expired on 28 Nov 2026, 14:03 UTC; the next HTTPS visit to go.acme-shop.com obtains a new one."},
		{"none, verified", verified, certs.Status{State: certs.StateNone},
			CheckPending, "None yet: the first HTTPS visit to https://go.acme-shop.com obtains one, in a few seconds."},
		{"none, pending", pending, certs.Status{State: certs.StateNone},
			CheckPending, "None yet: once the domain is verified and points at linkqr, its first HTTPS visit obtains one."},
	} {
		if got := certificateCheck(tc.d, tc.st); got.State != tc.state || got.Detail != tc.detail {
			t.Errorf("%s: %s %q\nwant %s %q", tc.name, got.State, got.Detail, tc.state, tc.detail)
		}
	}
	if got := notTerminated(at); got.State != CheckNotApplicable || !got.CheckedAt.Equal(at) {
		t.Errorf("behind a proxy: %+v", got)
	}
}
