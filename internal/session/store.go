// Package session keeps browser sessions in PostgreSQL behind a
// gorilla/sessions Store. The cookie holds only a random 256-bit id, signed
// with a key derived from LINKQR_SECRET_KEY; the session's values live in
// the sessions table, encrypted and authenticated, under the SHA-256 of that
// id. Keeping sessions server-side is what makes two guarantees possible
// that a pure cookie store cannot give: signing in issues a brand-new id
// (Renew), so an id planted before sign-in is worthless afterwards, and
// signing out deletes the row, so a copied cookie stops working at once.
package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/session/internal/sessiondb"
	"github.com/linkqr/linkqr/internal/store"
)

// CookieName is the name of linkqr's session cookie.
const CookieName = "linkqr_session"

// DefaultMaxAge is how long a session lives after its last change.
const DefaultMaxAge = 14 * 24 * time.Hour

// maxDataLen bounds the encoded values of one session.
const maxDataLen = 16 << 10

// ErrEnded is returned by Save when the session was ended (signed out, or
// replaced at sign-in) while the request was running; it is not re-created.
var ErrEnded = errors.New("session: the session has ended")

// Keys are the secrets of a Store; derive each from LINKQR_SECRET_KEY with
// its own purpose.
type Keys struct {
	Cookie   []byte // signs the id in the cookie (HMAC-SHA256)
	DataAuth []byte // authenticates the stored values (HMAC-SHA256)
	DataEnc  []byte // encrypts the stored values (AES-256, 32 bytes)
}

// Store is a gorilla/sessions Store over the sessions table.
type Store struct {
	db     *store.DB
	log    *slog.Logger
	cookie *securecookie.SecureCookie
	data   *securecookie.SecureCookie
	maxAge time.Duration
	now    func() time.Time

	// ClientIP, when set, gives the client address recorded with a new
	// session (the account page lists it).
	ClientIP func(*http.Request) netip.Addr

	// Options are the cookie attributes of new sessions: HttpOnly,
	// SameSite=Lax, Path=/, Secure as given to NewStore.
	Options sessions.Options
}

// NewStore returns a Store. secure sets the cookie's Secure attribute; set
// it whenever the UI is served over https.
func NewStore(db *store.DB, log *slog.Logger, keys Keys, secure bool) *Store {
	s := &Store{
		db:     db,
		log:    log,
		cookie: securecookie.New(keys.Cookie, nil),
		data:   securecookie.New(keys.DataAuth, keys.DataEnc),
		now:    time.Now,
	}
	s.data.MaxLength(maxDataLen)
	s.setMaxAge(DefaultMaxAge)
	s.Options = sessions.Options{
		Path:     "/",
		MaxAge:   int(s.maxAge / time.Second),
		HttpOnly: true,
		Secure:   secure,
		SameSite: http.SameSiteLaxMode,
	}
	return s
}

func (s *Store) setMaxAge(d time.Duration) {
	s.maxAge = d
	secs := int64(d / time.Second)
	s.cookie.MaxAge(int(secs))
	s.data.MaxAge(int(secs))
}

// Get returns the request's session (cached for the rest of the request by
// gorilla's registry), a new one when the request has none or an unusable
// one. An error means the database could not be asked; the returned session
// is then new.
func (s *Store) Get(r *http.Request, name string) (*sessions.Session, error) {
	return sessions.GetRegistry(r).Get(s, name)
}

// New loads the session named by the request's cookie without caching it.
// A missing, tampered, expired or unknown cookie yields a new, empty
// session: those are normal events, not errors.
func (s *Store) New(r *http.Request, name string) (*sessions.Session, error) {
	sess := s.fresh(name)
	c, err := r.Cookie(name)
	if err != nil {
		return sess, nil
	}
	var sid string
	if err := s.cookie.Decode(name, c.Value, &sid); err != nil {
		return sess, nil
	}
	hash := hashID(sid)
	row, err := sessiondb.New().SessionGet(r.Context(), s.db.Conn(r.Context()), sessiondb.SessionGetParams{IDHash: hash[:], Now: s.now()})
	if err != nil {
		if errors.Is(store.InterpretError(err), id.ErrNotFound) {
			return sess, nil
		}
		return sess, fmt.Errorf("load session: %w", store.InterpretError(err))
	}
	if err := s.data.Decode(dataName(hash), row.Data, &sess.Values); err != nil {
		s.log.Warn("session data does not decode; starting a new session", "err", err)
		sess.Values = map[any]any{}
		return sess, nil
	}
	sess.ID, sess.IsNew = sid, false
	if err := sessiondb.New().SessionTouch(r.Context(), s.db.Conn(r.Context()), sessiondb.SessionTouchParams{IDHash: hash[:], Now: s.now()}); err != nil {
		s.log.Warn("record session use", "err", err)
	}
	return sess, nil
}

func (s *Store) fresh(name string) *sessions.Session {
	sess := sessions.NewSession(s, name)
	opts := s.Options
	sess.Options = &opts
	sess.IsNew = true
	return sess
}

// Save writes the session and sets its cookie. A session whose
// Options.MaxAge is negative is ended: its row is deleted and the cookie
// expired. An existing session that was ended meanwhile is not re-created
// (ErrEnded), so a late write can never resurrect a signed-out session.
func (s *Store) Save(r *http.Request, w http.ResponseWriter, sess *sessions.Session) error {
	if sess.Options.MaxAge < 0 {
		if sess.ID != "" {
			if err := s.delete(r.Context(), sess.ID); err != nil {
				return err
			}
		}
		sess.ID = ""
		http.SetCookie(w, sessions.NewCookie(sess.Name(), "", sess.Options))
		return nil
	}
	now := s.now()
	expires := now.Add(s.maxAge)
	q := sessiondb.New()
	if sess.ID == "" {
		id, err := newID()
		if err != nil {
			return err
		}
		hash := hashID(id)
		data, err := s.data.Encode(dataName(hash), sess.Values)
		if err != nil {
			return fmt.Errorf("encode session: %w", err)
		}
		ua, ip := s.client(r)
		if err := q.SessionCreate(r.Context(), s.db.Conn(r.Context()), sessiondb.SessionCreateParams{
			IDHash: hash[:], UserID: userIDValue(sess), Data: data, ExpiresAt: expires, UserAgent: ua, IP: ip,
		}); err != nil {
			return fmt.Errorf("create session: %w", store.InterpretError(err))
		}
		sess.ID = id
	} else {
		hash := hashID(sess.ID)
		data, err := s.data.Encode(dataName(hash), sess.Values)
		if err != nil {
			return fmt.Errorf("encode session: %w", err)
		}
		n, err := q.SessionUpdate(r.Context(), s.db.Conn(r.Context()), sessiondb.SessionUpdateParams{
			IDHash: hash[:], UserID: userIDValue(sess), Data: data, ExpiresAt: expires, Now: now,
		})
		if err != nil {
			return fmt.Errorf("update session: %w", store.InterpretError(err))
		}
		if n == 0 {
			sess.ID = ""
			expired := *sess.Options
			expired.MaxAge = -1
			http.SetCookie(w, sessions.NewCookie(sess.Name(), "", &expired))
			return ErrEnded
		}
	}
	encoded, err := s.cookie.Encode(sess.Name(), sess.ID)
	if err != nil {
		return fmt.Errorf("encode session cookie: %w", err)
	}
	http.SetCookie(w, sessions.NewCookie(sess.Name(), encoded, sess.Options))
	return nil
}

// Renew ends the session's current id and empties it; the next Save issues
// a brand-new id. Sign-in calls it so that an id known before sign-in (one
// an attacker planted, say) never becomes an authenticated session. It also
// sweeps expired sessions, which keeps the table small without a worker.
func (s *Store) Renew(ctx context.Context, sess *sessions.Session) error {
	if sess.ID != "" {
		if err := s.delete(ctx, sess.ID); err != nil {
			return err
		}
	}
	sess.ID = ""
	sess.IsNew = true
	clear(sess.Values)
	if _, err := sessiondb.New().SessionDeleteExpired(ctx, s.db.Conn(ctx), s.now()); err != nil {
		s.log.Warn("sweep expired sessions", "err", err)
	}
	return nil
}

func (s *Store) delete(ctx context.Context, id string) error {
	hash := hashID(id)
	if err := sessiondb.New().SessionDelete(ctx, s.db.Conn(ctx), hash[:]); err != nil {
		return fmt.Errorf("delete session: %w", store.InterpretError(err))
	}
	return nil
}

// newID returns 256 random bits, base64url-encoded.
func newID() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("session id: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func hashID(id string) [32]byte { return sha256.Sum256([]byte(id)) }

// dataName binds the stored values to their row: values copied into
// another session's row fail authentication.
func dataName(hash [32]byte) string {
	return "session-data-" + base64.RawURLEncoding.EncodeToString(hash[:])
}
