package apikey

import (
	"crypto/rand"
	"strings"
)

// TokenPrefix marks a linkqr API key, so secret scanners and humans can
// recognise one.
const TokenPrefix = "lqk_"

const (
	publicIDLen = 12
	secretLen   = 32
	tokenLen    = len(TokenPrefix) + publicIDLen + 1 + secretLen
	base62      = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// newToken returns a fresh "lqk_<12>_<32>" token and its public id.
func newToken() (token, publicID string) {
	publicID = randomBase62(publicIDLen)
	return TokenPrefix + publicID + "_" + randomBase62(secretLen), publicID
}

// parseToken checks the shape of a token and returns its public id.
func parseToken(token string) (publicID string, ok bool) {
	if len(token) != tokenLen || !strings.HasPrefix(token, TokenPrefix) || token[len(TokenPrefix)+publicIDLen] != '_' {
		return "", false
	}
	publicID = token[len(TokenPrefix) : len(TokenPrefix)+publicIDLen]
	if !isBase62(publicID) || !isBase62(token[len(TokenPrefix)+publicIDLen+1:]) {
		return "", false
	}
	return publicID, true
}

// IsToken reports whether s has the shape of an API key (for choosing
// between API key and JWT verification).
func IsToken(s string) bool { return strings.HasPrefix(s, TokenPrefix) }

func isBase62(s string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(base62, s[i]) < 0 {
			return false
		}
	}
	return true
}

// randomBase62 draws n characters uniformly from a CSPRNG (rejection
// sampling: bytes ≥ 248 are discarded so no character is favoured).
func randomBase62(n int) string {
	out := make([]byte, 0, n)
	buf := make([]byte, n*2)
	for len(out) < n {
		_, _ = rand.Read(buf) // crypto/rand never fails on supported platforms
		for _, b := range buf {
			if b < 248 && len(out) < n {
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out)
}
