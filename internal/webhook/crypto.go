package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/sealbox"
)

// SecretPrefix starts every signing secret, so a leaked one is recognisable.
const SecretPrefix = "whsec_"

// newSecret returns a fresh signing secret: the prefix and 256 random bits
// in base32 (A–Z, 2–7: nothing a double-click or a shell would split).
func newSecret() string {
	return SecretPrefix + rand.Text() + rand.Text()
}

// sealer encrypts signing secrets at rest (sealbox). The subscription id
// is the associated data, so a ciphertext copied onto another row does not
// decrypt.
type sealer struct {
	box *sealbox.Box
}

func newSealer(key []byte) (*sealer, error) {
	box, err := sealbox.New(key)
	if err != nil {
		return nil, fmt.Errorf("webhook secret key: %w", err)
	}
	return &sealer{box: box}, nil
}

// seal returns nonce || ciphertext.
func (s *sealer) seal(id uuid.UUID, secret string) []byte {
	return s.box.Seal(id[:], []byte(secret))
}

func (s *sealer) open(id uuid.UUID, blob []byte) (string, error) {
	plain, err := s.box.Open(id[:], blob)
	if err != nil {
		return "", fmt.Errorf("webhook secret: %w", err)
	}
	return string(plain), nil
}

// Request headers of a delivery (docs/api.md#webhooks).
const (
	HeaderSignature = "Service-Signature"
	HeaderEventID   = "Service-Event-Id"
	HeaderAttempt   = "Service-Delivery-Attempt"
	UserAgent       = "linkqr-webhooks/1"
)

// DefaultTolerance is how old a signature's timestamp receivers should
// accept (docs/api.md#webhooks).
const DefaultTolerance = 300 * time.Second

// Signature errors returned by Verify.
var (
	ErrSignatureMalformed = errors.New("webhook signature header is malformed")
	ErrSignatureExpired   = errors.New("webhook signature timestamp is outside the tolerance")
	ErrSignatureMismatch  = errors.New("no webhook signature matches the payload")
)

// Sign returns the Service-Signature header value for body at t: one v1
// entry per secret, in the order given (during a rotation: new, then old).
func Sign(body []byte, t time.Time, secrets ...string) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=" + ts)
	for _, s := range secrets {
		b.WriteString(",v1=")
		b.WriteString(hex.EncodeToString(mac(s, ts, body)))
	}
	return b.String()
}

func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a Service-Signature header the way a receiver should: the
// timestamp within tolerance of now (either direction) and at least one v1
// entry equal, in constant time, to the HMAC of "<t>.<body>" under secret.
// Entries of other schemes are ignored.
func Verify(body []byte, header, secret string, tolerance time.Duration, now time.Time) error {
	ts, sigs, err := ParseSignature(header)
	if err != nil {
		return err
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return ErrSignatureExpired
	}
	want := mac(secret, strconv.FormatInt(ts, 10), body)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return ErrSignatureMismatch
}

// ParseSignature splits "t=<unix>,v1=<hex>[,v1=<hex>…]" into the timestamp
// and the decoded v1 signatures, in header order.
func ParseSignature(header string) (int64, [][]byte, error) {
	var (
		ts    int64
		hasTS bool
		sigs  [][]byte
	)
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return 0, nil, ErrSignatureMalformed
		}
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || hasTS || n <= 0 {
				return 0, nil, ErrSignatureMalformed
			}
			ts, hasTS = n, true
		case "v1":
			sig, err := hex.DecodeString(v)
			if err != nil || len(sig) != sha256.Size {
				return 0, nil, ErrSignatureMalformed
			}
			sigs = append(sigs, sig)
		}
	}
	if !hasTS || len(sigs) == 0 {
		return 0, nil, ErrSignatureMalformed
	}
	return ts, sigs, nil
}
