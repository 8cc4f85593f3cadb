package session_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/sessions"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/session"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func testKeys(seed byte) session.Keys {
	k := func(b byte) []byte { return []byte(strings.Repeat(string(rune('a'+b)), 32)) }
	return session.Keys{Cookie: k(seed), DataAuth: k(seed + 1), DataEnc: k(seed + 2)}
}

func setup(t *testing.T) (*session.Store, *pgxpool.Pool, uuid.UUID) {
	t.Helper()
	pool := testkit.DB(t)
	if _, err := account.NewService(store.NewDB(pool), "", nil, nil, nil).Bootstrap(context.Background(), account.BootstrapInput{
		Email: "s@example.com", Password: "a long enough password", Workspace: "W",
	}); err != nil {
		t.Fatal(err)
	}
	var id uuid.UUID
	if err := pool.QueryRow(context.Background(), "SELECT id FROM users").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return session.NewStore(store.NewDB(pool), slog.New(slog.DiscardHandler), testKeys(0), false), pool, id
}

// request builds a request carrying the cookies of earlier responses.
func request(cookies ...*http.Cookie) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, c := range cookies {
		if c.MaxAge >= 0 && c.Value != "" {
			r.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
		}
	}
	return r
}

func save(t *testing.T, s *session.Store, r *http.Request, sess *sessions.Session) *http.Cookie {
	t.Helper()
	w := httptest.NewRecorder()
	if err := s.Save(r, w, sess); err != nil {
		t.Fatalf("save: %v", err)
	}
	cs := w.Result().Cookies()
	if len(cs) != 1 {
		t.Fatalf("save set %d cookies", len(cs))
	}
	return cs[0]
}

func load(t *testing.T, s *session.Store, c *http.Cookie) *sessions.Session {
	t.Helper()
	sess, err := s.New(request(c), session.CookieName)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return sess
}

func TestSaveAndLoad(t *testing.T) {
	t.Parallel()
	s, pool, user := setup(t)
	sess := load(t, s, &http.Cookie{})
	if !sess.IsNew {
		t.Fatal("no cookie: want a new session")
	}
	session.SetUser(sess, user)
	session.SetNewKey(sess, session.NewKey{WorkspaceID: "ws_x", KeyID: "key_y", Name: "n", Secret: "lqk_TOPSECRETVALUE"})
	session.AddFlash(sess, "ok", "hello")
	c := save(t, s, request(), sess)
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure || c.Path != "/" || c.MaxAge != int(session.DefaultMaxAge/time.Second) {
		t.Errorf("cookie attributes: %s", c.String())
	}

	got := load(t, s, c)
	if got.IsNew || got.ID != sess.ID {
		t.Fatalf("reloaded session: new=%v id match=%v", got.IsNew, got.ID == sess.ID)
	}
	if id, ok := session.UserID(got); !ok || id != user {
		t.Errorf("user %v %v", id, ok)
	}
	if k, ok := session.PeekNewKey(got); !ok || k.Secret != "lqk_TOPSECRETVALUE" {
		t.Errorf("new key %+v", k)
	}
	if f, ok := session.Flashes(got); !ok || len(f) != 1 || f[0].Message != "hello" {
		t.Errorf("flashes %+v", f)
	}

	// The table holds neither the id nor readable values.
	var idHash []byte
	var data string
	var rowUser uuid.UUID
	if err := pool.QueryRow(context.Background(), "SELECT id_hash, data, user_id FROM sessions").Scan(&idHash, &data, &rowUser); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256([]byte(sess.ID)); string(idHash) != string(sum[:]) {
		t.Error("id_hash is not the SHA-256 of the id")
	}
	if strings.Contains(data, "TOPSECRET") || strings.Contains(data, sess.ID) || strings.Contains(c.Value, sess.ID) {
		t.Error("stored data or cookie carries readable secrets or the raw id")
	}
	if rowUser != user {
		t.Errorf("user_id column %v", rowUser)
	}
}

func TestRenewIssuesNewIDAndForgetsOldOne(t *testing.T) {
	t.Parallel()
	s, _, user := setup(t)
	anon := load(t, s, &http.Cookie{})
	session.SetNext(anon, "/somewhere")
	old := save(t, s, request(), anon)
	oldID := anon.ID

	sess := load(t, s, old)
	if err := s.Renew(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	if sess.ID != "" || len(sess.Values) != 0 {
		t.Fatalf("after Renew: id %q, values %v", sess.ID, sess.Values)
	}
	session.SetUser(sess, user)
	fresh := save(t, s, request(old), sess)
	if sess.ID == oldID || fresh.Value == old.Value {
		t.Fatal("Renew kept the id")
	}
	if got := load(t, s, old); !got.IsNew || len(got.Values) != 0 {
		t.Fatal("the pre-renewal cookie still loads a session")
	}
	if _, ok := session.UserID(load(t, s, fresh)); !ok {
		t.Fatal("the new cookie does not load the signed-in session")
	}
}

func TestEndedSessionIsNotResurrected(t *testing.T) {
	t.Parallel()
	s, _, user := setup(t)
	sess := load(t, s, &http.Cookie{})
	session.SetUser(sess, user)
	c := save(t, s, request(), sess)

	// Two requests hold the same session; one signs out.
	a, b := load(t, s, c), load(t, s, c)
	a.Options.MaxAge = -1
	ended := save(t, s, request(c), a)
	if ended.MaxAge >= 0 || ended.Value != "" {
		t.Errorf("ending cookie %s", ended.String())
	}
	// The other one's late write fails instead of re-creating the row.
	session.AddFlash(b, "ok", "late")
	w := httptest.NewRecorder()
	if err := s.Save(request(c), w, b); !errors.Is(err, session.ErrEnded) {
		t.Fatalf("late save: %v, want session.ErrEnded", err)
	}
	if cs := w.Result().Cookies(); len(cs) != 1 || cs[0].MaxAge >= 0 {
		t.Errorf("late save cookies %v", cs)
	}
	if got := load(t, s, c); !got.IsNew {
		t.Fatal("ended session loads again")
	}
}

func TestUnusableCookiesGiveNewSessions(t *testing.T) {
	t.Parallel()
	s, pool, user := setup(t)
	sess := load(t, s, &http.Cookie{})
	session.SetUser(sess, user)
	c := save(t, s, request(), sess)

	other := session.NewStore(store.NewDB(pool), slog.New(slog.DiscardHandler), testKeys(5), false)
	if got, err := other.New(request(c), session.CookieName); err != nil || !got.IsNew {
		t.Errorf("cookie signed with other keys: new=%v err=%v", got.IsNew, err)
	}
	for _, v := range []string{"garbage", c.Value[:len(c.Value)-2], strings.ToUpper(c.Value)} {
		if got := load(t, s, &http.Cookie{Name: session.CookieName, Value: v}); !got.IsNew {
			t.Errorf("cookie %q loaded a session", v)
		}
	}

	// Expired sessions are not loaded, and Renew sweeps them.
	if _, err := pool.Exec(context.Background(), "UPDATE sessions SET expires_at = now() - interval '1 second'"); err != nil {
		t.Fatal(err)
	}
	if got := load(t, s, c); !got.IsNew {
		t.Error("expired session loaded")
	}
	if err := s.Renew(context.Background(), load(t, s, &http.Cookie{})); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM sessions").Scan(&n); err != nil || n != 0 {
		t.Errorf("expired sessions left: %d %v", n, err)
	}
}

// TestFlashesAreBounded: a client that posts forms without ever following
// the redirects keeps only the latest MaxFlashes messages, so its session
// never outgrows what can be stored.
func TestFlashesAreBounded(t *testing.T) {
	s := sessions.NewSession(nil, session.CookieName)
	for i := range 50 {
		session.AddFlashWith(s, session.Flash{Kind: "ok", Message: fmt.Sprintf("message %d %s", i, strings.Repeat("x", 2000))})
	}
	got, ok := session.Flashes(s)
	if !ok || len(got) != session.MaxFlashes || !strings.HasPrefix(got[len(got)-1].Message, "message 49 ") ||
		!strings.HasPrefix(got[0].Message, fmt.Sprintf("message %d ", 50-session.MaxFlashes)) {
		t.Fatalf("%d flashes kept, the last %q", len(got), got[len(got)-1].Message[:12])
	}
}
