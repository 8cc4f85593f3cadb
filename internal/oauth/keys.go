package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/oauth/internal/oauthdb"
	"github.com/linkqr/linkqr/internal/sealbox"
	"github.com/linkqr/linkqr/internal/store"
)

// Alg is the one signature algorithm linkqr issues and accepts. ES256 is
// what every JOSE library and every JWT-verifying gateway supports.
const Alg = jose.ES256

// signingKey is one key of the set, as loaded from oauth_signing_keys.
type signingKey struct {
	kid            string
	activatesAt    time.Time
	publishedUntil *time.Time // nil while it signs or waits to
	public         *ecdsa.PublicKey
	jwk            json.RawMessage
	privateEnc     []byte

	signerOnce sync.Once
	signer     jose.Signer
	signerErr  error
}

// published reports whether the key belongs in the JWKS (and verifies) at t.
func (k *signingKey) published(t time.Time) bool {
	return k.publishedUntil == nil || t.Before(*k.publishedUntil)
}

// keyring holds the key set in memory (swapped atomically on reload) and
// the box that protects private keys at rest.
type keyring struct {
	box        *sealbox.Box
	set        atomic.Pointer[[]*signingKey] // ordered by activatesAt
	reloadMu   sync.Mutex
	lastReload time.Time
}

func newKeyring(kek []byte) (*keyring, error) {
	box, err := sealbox.New(kek)
	if err != nil {
		return nil, fmt.Errorf("oauth key encryption key: %w", err)
	}
	kr := &keyring{box: box}
	kr.set.Store(&[]*signingKey{})
	return kr, nil
}

// seal encrypts a private key; the kid is the associated data, so a
// ciphertext moved to another row does not decrypt.
func (kr *keyring) seal(kid string, plain []byte) []byte {
	return kr.box.Seal([]byte(kid), plain)
}

func (kr *keyring) open(kid string, blob []byte) ([]byte, error) {
	return kr.box.Open([]byte(kid), blob)
}

// current is the key that signs at t: the last one activated by then.
func (kr *keyring) current(t time.Time) *signingKey {
	set := *kr.set.Load()
	for i := len(set) - 1; i >= 0; i-- {
		if !set[i].activatesAt.After(t) {
			return set[i]
		}
	}
	return nil
}

// lookup returns the published key kid at t.
func (kr *keyring) lookup(kid string, t time.Time) *signingKey {
	for _, k := range *kr.set.Load() {
		if k.kid == kid && k.published(t) {
			return k
		}
	}
	return nil
}

func (k *signingKey) getSigner(kr *keyring) (jose.Signer, error) {
	k.signerOnce.Do(func() {
		der, err := kr.open(k.kid, k.privateEnc)
		if err != nil {
			k.signerErr = err
			return
		}
		priv, err := x509.ParsePKCS8PrivateKey(der)
		if err != nil {
			k.signerErr = err
			return
		}
		k.signer, k.signerErr = jose.NewSigner(
			jose.SigningKey{Algorithm: Alg, Key: jose.JSONWebKey{Key: priv, KeyID: k.kid, Algorithm: string(Alg)}},
			(&jose.SignerOptions{}).WithType("at+jwt"))
	})
	return k.signer, k.signerErr
}

// ReloadKeys reads the key set from the database.
func (s *Service) ReloadKeys(ctx context.Context) error {
	rows, err := oauthdb.New().OAuthSigningKeyList(ctx, s.db.Conn(ctx))
	if err != nil {
		return store.InterpretError(err)
	}
	old := map[string]*signingKey{}
	for _, k := range *s.keys.set.Load() {
		old[k.kid] = k
	}
	set := make([]*signingKey, 0, len(rows))
	for _, r := range rows {
		if k, ok := old[r.Kid]; ok && sameTime(k.publishedUntil, r.PublishedUntil) {
			set = append(set, k) // keep its decrypted signer
			continue
		}
		var jwk jose.JSONWebKey
		if err := jwk.UnmarshalJSON(r.PublicJwk); err != nil {
			return fmt.Errorf("signing key %s: %w", r.Kid, err)
		}
		pub, ok := jwk.Key.(*ecdsa.PublicKey)
		if !ok {
			return fmt.Errorf("signing key %s: not an EC public key", r.Kid)
		}
		set = append(set, &signingKey{
			kid: r.Kid, activatesAt: r.ActivatesAt, publishedUntil: r.PublishedUntil,
			public: pub, jwk: r.PublicJwk, privateEnc: r.PrivateKeyEnc,
		})
	}
	s.keys.set.Store(&set)
	return nil
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

func (s *Service) reloadKeysAsync() {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.ReloadKeys(ctx); err != nil {
			s.log.Warn("reload OAuth signing keys", "err", err)
		}
	}()
}

// reloadForUnknownKid reloads the key set at most once every 5 s, for a
// token signed by a kid this instance does not know (only a forged token or
// a key created elsewhere whose NOTIFY has not arrived yet).
func (s *Service) reloadForUnknownKid(ctx context.Context) bool {
	s.keys.reloadMu.Lock()
	defer s.keys.reloadMu.Unlock()
	if time.Since(s.keys.lastReload) < 5*time.Second {
		return false
	}
	s.keys.lastReload = time.Now()
	return s.ReloadKeys(ctx) == nil
}

// EnsureKeys is the rotation step, run at start and by the periodic job:
// under an advisory lock, it makes sure a key signs now and a successor is
// published ahead of its activation (one RotateEvery after the current
// key's), retires the keys that stopped signing (published until every
// token they signed has expired) and deletes the ones past that. Then it
// reloads this instance's key set; other instances reload on NOTIFY.
func (s *Service) EnsureKeys(ctx context.Context) error {
	now := s.now()
	err := s.db.InTx(ctx, func(tx pgx.Tx) error {
		q := oauthdb.New()
		if err := q.OAuthSigningKeyLock(ctx, tx); err != nil {
			return store.InterpretError(err)
		}
		rows, err := q.OAuthSigningKeyList(ctx, tx)
		if err != nil {
			return store.InterpretError(err)
		}
		changed := false
		cur := -1
		for i, r := range rows {
			if !r.ActivatesAt.After(now) {
				cur = i
			}
		}
		if cur < 0 {
			// Nothing signs yet (a fresh database): a key for right now.
			r, err := s.createKey(ctx, tx, now, now)
			if err != nil {
				return err
			}
			rows = append([]oauthdb.OauthSigningKey{r}, rows...)
			cur, changed = 0, true
		}
		// Retire every key before the current one.
		for i := 0; i < cur; i++ {
			if rows[i].PublishedUntil == nil {
				until := rows[i+1].ActivatesAt.Add(AccessTokenTTL + clockSkew)
				if err := q.OAuthSigningKeyRetire(ctx, tx, oauthdb.OAuthSigningKeyRetireParams{Kid: rows[i].Kid, PublishedUntil: &until}); err != nil {
					return store.InterpretError(err)
				}
				changed = true
			}
		}
		if cur == len(rows)-1 {
			// No successor published yet.
			next := rows[cur].ActivatesAt.Add(s.rotateEvery)
			if min := now.Add(AccessTokenTTL); next.Before(min) {
				next = min // overdue: still publish it before it signs
			}
			if _, err := s.createKey(ctx, tx, now, next); err != nil {
				return err
			}
			changed = true
		}
		n, err := q.OAuthSigningKeyDeleteExpired(ctx, tx, &now)
		if err != nil {
			return store.InterpretError(err)
		}
		if changed || n > 0 {
			return store.Notify(ctx, tx, KeysChannel, "")
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.ReloadKeys(ctx)
}

func (s *Service) createKey(ctx context.Context, tx pgx.Tx, now, activates time.Time) (oauthdb.OauthSigningKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return oauthdb.OauthSigningKey{}, err
	}
	jwk := jose.JSONWebKey{Key: &priv.PublicKey, Algorithm: string(Alg), Use: "sig"}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return oauthdb.OauthSigningKey{}, err
	}
	jwk.KeyID = base64.RawURLEncoding.EncodeToString(tp)
	pubJSON, err := jwk.MarshalJSON()
	if err != nil {
		return oauthdb.OauthSigningKey{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return oauthdb.OauthSigningKey{}, err
	}
	r := oauthdb.OauthSigningKey{
		Kid: jwk.KeyID, Alg: string(Alg), PublicJwk: pubJSON,
		PrivateKeyEnc: s.keys.seal(jwk.KeyID, der), CreatedAt: now, ActivatesAt: activates,
	}
	err = oauthdb.New().OAuthSigningKeyCreate(ctx, tx, oauthdb.OAuthSigningKeyCreateParams{
		Kid: r.Kid, Alg: r.Alg, PublicJwk: r.PublicJwk, PrivateKeyEnc: r.PrivateKeyEnc,
		CreatedAt: r.CreatedAt, ActivatesAt: r.ActivatesAt,
	})
	return r, store.InterpretError(err)
}

// JWKS is the public key set of /.well-known/jwks.json: every key that
// signs, will sign, or signed tokens that may not have expired yet.
func (s *Service) JWKS() []byte {
	now := s.now()
	var keys []json.RawMessage
	for _, k := range *s.keys.set.Load() {
		if k.published(now) {
			keys = append(keys, k.jwk)
		}
	}
	if keys == nil {
		keys = []json.RawMessage{}
	}
	b, _ := json.Marshal(map[string]any{"keys": keys})
	return b
}

// Sign signs claims with the key that signs now (typ at+jwt, kid). The token
// endpoint is its production caller; tests use it to forge tokens that are
// correctly signed but otherwise wrong.
func (s *Service) Sign(claims any) (string, error) {
	k := s.keys.current(s.now())
	if k == nil {
		return "", errors.New("no OAuth signing key is active")
	}
	signer, err := k.getSigner(s.keys)
	if err != nil {
		return "", fmt.Errorf("signing key %s: %w", k.kid, err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return obj.CompactSerialize()
}
