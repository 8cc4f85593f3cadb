package account

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"time"
)

// A link token is 256 random bits, base64url: what invitation and password
// reset links carry. Only its SHA-256 is stored; a token has far too much
// entropy for a fast hash to be guessed back, and a lookup by hash compares
// nothing secret in Go.
const tokenLen = 43

// newToken returns a fresh token and the hash that is stored.
func newToken() (token string, hash []byte) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, hashToken(token)
}

func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// parseToken accepts only what newToken makes, so malformed input never
// reaches the database.
func parseToken(s string) ([]byte, bool) {
	if len(s) != tokenLen {
		return nil, false
	}
	if _, err := base64.RawURLEncoding.DecodeString(s); err != nil {
		return nil, false
	}
	return hashToken(s), true
}

// LinkState is why a link no longer works.
type LinkState string

// The states of a link that can no longer be used.
const (
	LinkUsed    LinkState = "used"
	LinkRevoked LinkState = "revoked"
	LinkExpired LinkState = "expired"
)

// GoneError refuses a link that existed but can no longer be used; the
// pages answer 410 and say which of the three it is.
type GoneError struct{ State LinkState }

func (e *GoneError) Error() string { return "the link was " + string(e.State) }

// ErrOtherAddress refuses an invitation link opened by a user signed in
// with another address than the invited one.
var ErrOtherAddress = errors.New("the invitation is for another address")

// ErrAccountExists answers a sign-up for an address that already has an
// account: nothing changed, and the person is sent to sign in.
var ErrAccountExists = errors.New("this address already has an account")

// linkGone is the state of a link given its use and expiry, or "" when it
// still works.
func linkGone(used, revoked bool, expires, now time.Time) LinkState {
	switch {
	case used:
		return LinkUsed
	case revoked:
		return LinkRevoked
	case !now.Before(expires):
		return LinkExpired
	}
	return ""
}
