package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v82/webhook"

	"github.com/linkqr/linkqr/internal/webhook"
)

// independentHMAC recomputes a v1 value from the contract's words alone.
func independentHMAC(secret string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(ts, 10) + "." + string(body)))
	return hex.EncodeToString(m.Sum(nil))
}

func TestSignMatchesIndependentHMAC(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"evt_1","object":"event"}`)
	at := time.Unix(1_800_000_000, 0)
	h := webhook.Sign(body, at, "whsec_new", "whsec_old")
	want := "t=1800000000,v1=" + independentHMAC("whsec_new", 1_800_000_000, body) + ",v1=" + independentHMAC("whsec_old", 1_800_000_000, body)
	if h != want {
		t.Fatalf("Sign = %s\nwant   %s", h, want)
	}
	for _, secret := range []string{"whsec_new", "whsec_old"} {
		if err := webhook.Verify(body, h, secret, webhook.DefaultTolerance, at.Add(time.Minute)); err != nil {
			t.Errorf("Verify with %s: %v", secret, err)
		}
	}
	cases := []struct {
		name   string
		body   []byte
		header string
		secret string
		now    time.Time
		want   error
	}{
		{"wrong secret", body, h, "whsec_other", at, webhook.ErrSignatureMismatch},
		{"tampered body", []byte(`{"id":"evt_2","object":"event"}`), h, "whsec_new", at, webhook.ErrSignatureMismatch},
		{"too old", body, h, "whsec_new", at.Add(301 * time.Second), webhook.ErrSignatureExpired},
		{"from the future", body, h, "whsec_new", at.Add(-301 * time.Second), webhook.ErrSignatureExpired},
		{"no timestamp", body, "v1=" + independentHMAC("whsec_new", 1, body), "whsec_new", at, webhook.ErrSignatureMalformed},
		{"no v1", body, "t=1800000000,v0=abc", "whsec_new", at, webhook.ErrSignatureMalformed},
		{"bad hex", body, "t=1800000000,v1=zz", "whsec_new", at, webhook.ErrSignatureMalformed},
		{"empty", body, "", "whsec_new", at, webhook.ErrSignatureMalformed},
	}
	for _, c := range cases {
		if err := webhook.Verify(c.body, c.header, c.secret, webhook.DefaultTolerance, c.now); !errors.Is(err, c.want) {
			t.Errorf("%s: Verify = %v, want %v", c.name, err, c.want)
		}
	}
}

// TestSignatureAcceptedByStripeGo: the header format is Stripe's, so a
// receiver may verify it with stripe-go's ValidatePayload (given our
// header's value), including during a rotation (two v1 entries).
func TestSignatureAcceptedByStripeGo(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"evt_1","object":"event","type":"link.created"}`)
	h := webhook.Sign(body, time.Now(), "whsec_new", "whsec_old")
	for _, secret := range []string{"whsec_new", "whsec_old"} {
		if err := stripewebhook.ValidatePayload(body, h, secret); err != nil {
			t.Errorf("stripe-go rejects the %s signature: %v", secret, err)
		}
	}
	if err := stripewebhook.ValidatePayload(body, h, "whsec_wrong"); err == nil {
		t.Error("stripe-go accepted a wrong secret; the check above proves nothing")
	}
}

func FuzzParseSignature(f *testing.F) {
	f.Add("t=1800000000,v1=" + strings.Repeat("ab", 32))
	f.Add("t=1,v1=" + strings.Repeat("00", 32) + ",v1=" + strings.Repeat("ff", 32))
	f.Add("t=,v1=")
	f.Add(",,,=")
	f.Add("t=1800000000,v0=x,v1=" + strings.Repeat("AB", 32))
	f.Fuzz(func(t *testing.T, header string) {
		ts, sigs, err := webhook.ParseSignature(header)
		if err != nil {
			return
		}
		if ts <= 0 || len(sigs) == 0 {
			t.Fatalf("accepted %q with t=%d and %d signatures", header, ts, len(sigs))
		}
		for _, s := range sigs {
			if len(s) != sha256.Size {
				t.Fatalf("accepted a %d-byte signature", len(s))
			}
		}
	})
}
