package session

import (
	"context"
	"net/http"
	"net/netip"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/sessions"
	"github.com/jackc/pgx/v5"

	"github.com/linkqr/linkqr/internal/session/internal/sessiondb"
	"github.com/linkqr/linkqr/internal/store"
)

// maxUserAgent bounds the stored User-Agent (the column's limit).
const maxUserAgent = 512

// Info describes one of a user's sessions for the account page. Ref names
// it in forms; the id (and its hash) never leave this package.
type Info struct {
	Ref       uuid.UUID
	UserAgent string
	IP        netip.Addr
	CreatedAt time.Time
	LastSeen  time.Time
	Current   bool // the session of the request that lists them
}

// client is the browser and address recorded with a new session.
func (s *Store) client(r *http.Request) (*string, *netip.Addr) {
	var ua *string
	if v := r.UserAgent(); v != "" {
		v = truncateUTF8(v, maxUserAgent)
		ua = &v
	}
	if s.ClientIP == nil {
		return ua, nil
	}
	ip := s.ClientIP(r)
	if !ip.IsValid() {
		return ua, nil
	}
	ip = ip.Unmap()
	return ua, &ip
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s
}

// List returns the user's live sessions, most recently used first; current
// is the request's session, marked in the result.
func (s *Store) List(ctx context.Context, userID uuid.UUID, current *sessions.Session) ([]Info, error) {
	rows, err := sessiondb.New().SessionListByUser(ctx, s.db.Conn(ctx), sessiondb.SessionListByUserParams{UserID: &userID, Now: s.now()})
	if err != nil {
		return nil, store.InterpretError(err)
	}
	var cur [32]byte
	if current != nil && current.ID != "" {
		cur = hashID(current.ID)
	}
	out := make([]Info, len(rows))
	for i, r := range rows {
		out[i] = Info{Ref: r.Ref, CreatedAt: r.CreatedAt, LastSeen: r.LastSeenAt, Current: string(r.IDHash) == string(cur[:])}
		if r.UserAgent != nil {
			out[i].UserAgent = *r.UserAgent
		}
		if r.IP != nil {
			out[i].IP = *r.IP
		}
	}
	return out, nil
}

// Revoke ends one of the user's sessions by its ref; another user's ref
// ends nothing (false).
func (s *Store) Revoke(ctx context.Context, userID, ref uuid.UUID) (bool, error) {
	n, err := sessiondb.New().SessionDeleteByRef(ctx, s.db.Conn(ctx), sessiondb.SessionDeleteByRefParams{UserID: &userID, Ref: ref})
	return n > 0, store.InterpretError(err)
}

// RevokeOthers ends every session of the user but keep (the request's);
// it returns how many ended.
func (s *Store) RevokeOthers(ctx context.Context, userID uuid.UUID, keep *sessions.Session) (int64, error) {
	h := hashID(keep.ID)
	n, err := sessiondb.New().SessionDeleteByUserExcept(ctx, s.db.Conn(ctx), sessiondb.SessionDeleteByUserExceptParams{UserID: &userID, Keep: h[:]})
	return n, store.InterpretError(err)
}

// RevokeAll ends every session of the user in tx, for a change that must
// sign them out everywhere with it (a password reset: internal/account);
// it returns how many ended.
func RevokeAll(ctx context.Context, tx pgx.Tx, userID uuid.UUID) (int64, error) {
	n, err := sessiondb.New().SessionDeleteByUser(ctx, tx, &userID)
	return n, store.InterpretError(err)
}
