package config

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MinSecretKeyLen is the shortest accepted LINKQR_SECRET_KEY, in bytes after
// decoding: every derived key gets 256 bits of input keying material.
const MinSecretKeyLen = 32

// DecodeSecretKey accepts standard or URL-safe base64, padded or not.
func DecodeSecretKey(v string) ([]byte, error) {
	v = strings.TrimSpace(v)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err := enc.DecodeString(v); err == nil {
			if len(key) < MinSecretKeyLen {
				return nil, fmt.Errorf("decodes to %d bytes; at least %d are required (generate one with: head -c 32 /dev/urandom | base64)", len(key), MinSecretKeyLen)
			}
			return key, nil
		}
	}
	return nil, errors.New("must be base64 (generate one with: head -c 32 /dev/urandom | base64)")
}

// EnsureSecretKey returns the configured key, or reads (creating it on first
// start) $LINKQR_DATA_DIR/secret.key so a development install keeps its
// sessions and encrypted data across restarts without any set-up.
func (c *Config) EnsureSecretKey() ([]byte, error) {
	if c.SecretKey != nil {
		return c.SecretKey, nil
	}
	path := filepath.Join(c.DataDir, "secret.key")
	if b, err := os.ReadFile(path); err == nil {
		key, err := DecodeSecretKey(string(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		c.SecretKey = key
		return key, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read secret key: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) { // another process won the race: use its key
		return c.EnsureSecretKey()
	}
	if err != nil {
		return nil, fmt.Errorf("create secret key: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n"); err != nil {
		return nil, fmt.Errorf("write secret key: %w", err)
	}
	c.SecretKey = key
	return key, nil
}

// DeriveKey gives each purpose ("session-auth", "webhook-secrets", …) its own
// independent 32-byte key from the one master secret, so a leak of one
// derived key exposes nothing else.
func DeriveKey(master []byte, purpose string) []byte {
	k, err := hkdf.Key(sha256.New, master, nil, "linkqr/"+purpose, 32)
	if err != nil {
		panic(err) // only for lengths beyond 255*32 bytes
	}
	return k
}
