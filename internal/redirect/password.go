package redirect

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/secrethash"
)

// A password-protected link (docs/targeting.md) answers its form
// page (200) until the visitor sends the right password, then 302 with a
// cookie for that link for PasswordCookieTTL. Wrong guesses are throttled
// per client address and link. A bot or link preview gets the form and
// never the target, whatever it sends, and is not counted.
const (
	PasswordCookieTTL = 24 * time.Hour
	// MaxGuesses wrong passwords per address and link in GuessWindow;
	// after that the form answers 429 until the window ends.
	MaxGuesses  = 5
	GuessWindow = 15 * time.Minute
	// passwordCookie is the cookie's name; its path is the code's, so each
	// link has its own.
	passwordCookie = "lq_pass"
	maxFormBytes   = 4 << 10
)

// PasswordForm is what the form page shows.
type PasswordForm struct {
	Status int    // 200, 401 (wrong password), 429 (too many guesses)
	Error  string // "" on the first visit
}

// passwords checks link passwords and the cookies that remember them.
type passwords struct {
	key     []byte // HMAC key of the cookies (derived from the secret key)
	mu      sync.Mutex
	guesses map[guessKey]*guessCount
	now     func() time.Time
}

type guessKey struct {
	ip   netip.Addr
	link uuid.UUID
}

type guessCount struct {
	n     int
	since time.Time
}

// maxGuessEntries bounds the throttle's memory; past it, old windows are
// swept (and, failing that, all of them).
const maxGuessEntries = 100_000

func newPasswords(key []byte) *passwords {
	return &passwords{key: key, guesses: map[guessKey]*guessCount{}, now: time.Now}
}

// cookieValue is "<expiry unix>.<mac>": the MAC covers the link, the
// expiry and the password's hash, so a new password ends every cookie.
func (p *passwords) cookieValue(t *link.Target, exp int64) string {
	m := hmac.New(sha256.New, p.key)
	m.Write(t.LinkID[:])
	m.Write([]byte(strconv.FormatInt(exp, 10)))
	m.Write([]byte(t.PasswordHash))
	return strconv.FormatInt(exp, 10) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// passed reports whether r carries a valid cookie for t.
func (p *passwords) passed(r *http.Request, t *link.Target) bool {
	for _, c := range r.CookiesNamed(passwordCookie) {
		exp, _, ok := strings.Cut(c.Value, ".")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(exp, 10, 64)
		if err != nil || p.now().Unix() >= n {
			continue
		}
		if hmac.Equal([]byte(c.Value), []byte(p.cookieValue(t, n))) {
			return true
		}
	}
	return false
}

// setCookie remembers the right password for t's code, on this host only.
func (p *passwords) setCookie(w http.ResponseWriter, r *http.Request, t *link.Target, code string, secure bool) {
	exp := p.now().Add(PasswordCookieTTL)
	http.SetCookie(w, &http.Cookie{
		Name: passwordCookie, Value: p.cookieValue(t, exp.Unix()), Path: "/" + code,
		Expires: exp, MaxAge: int(PasswordCookieTTL / time.Second),
		HttpOnly: true, Secure: secure || r.TLS != nil, SameSite: http.SameSiteLaxMode,
	})
}

// errThrottled: too many wrong guesses from this address for this link.
var errThrottled = errors.New("too many wrong passwords")

// check verifies a guess through the process-wide argon2id limiter
// (secrethash.ErrBusy when it is full, which counts against nobody).
func (p *passwords) check(ctx context.Context, ip netip.Addr, t *link.Target, guess string) (bool, error) {
	k := guessKey{ip: ip.Unmap(), link: t.LinkID}
	if p.throttled(k) {
		return false, errThrottled
	}
	ok, err := secrethash.Compare(ctx, guess, t.PasswordHash)
	if err != nil {
		return false, err
	}
	if !ok {
		p.failed(k)
	}
	return ok, nil
}

func (p *passwords) throttled(k guessKey) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	g := p.guesses[k]
	return g != nil && g.n >= MaxGuesses && p.now().Sub(g.since) < GuessWindow
}

func (p *passwords) failed(k guessKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	g := p.guesses[k]
	if g == nil || now.Sub(g.since) >= GuessWindow {
		if len(p.guesses) >= maxGuessEntries {
			p.sweep(now)
		}
		g = &guessCount{since: now}
		p.guesses[k] = g
	}
	g.n++
}

// sweep drops ended windows; mu held.
func (p *passwords) sweep(now time.Time) {
	for k, g := range p.guesses {
		if now.Sub(g.since) >= GuessWindow {
			delete(p.guesses, k)
		}
	}
	if len(p.guesses) >= maxGuessEntries {
		clear(p.guesses)
	}
}

// unlocked reports whether r may go on to t's destination: it carries the
// link's cookie, or it is the form's POST with the right password (the
// cookie is set). Otherwise it has answered the form page. A bot never
// passes, and nothing here counts a scan.
func (h *Handler) unlocked(w http.ResponseWriter, r *http.Request, t *link.Target, code string, ip netip.Addr) bool {
	if h.pages.Password == nil {
		h.pages.Gone(w, r)
		return false
	}
	if analytics.Classify(r.UserAgent()).Bot {
		h.pages.Password(w, r, PasswordForm{Status: http.StatusOK})
		return false
	}
	if r.Method != http.MethodPost {
		if h.pass.passed(r, t) {
			return true
		}
		h.pages.Password(w, r, PasswordForm{Status: http.StatusOK})
		return false
	}
	if h.sameSite.Check(r) != nil {
		h.pages.Password(w, r, PasswordForm{Status: http.StatusForbidden, Error: "This form must be sent from its own page. Please try again."})
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		h.pages.Password(w, r, PasswordForm{Status: http.StatusBadRequest, Error: "The form could not be read. Please try again."})
		return false
	}
	ok, err := h.pass.check(r.Context(), ip, t, r.PostForm.Get("password"))
	switch {
	case errors.Is(err, errThrottled):
		w.Header().Set("Retry-After", strconv.Itoa(int(GuessWindow/time.Second)))
		h.pages.Password(w, r, PasswordForm{Status: http.StatusTooManyRequests, Error: "Too many wrong passwords. Please try again in 15 minutes."})
		return false
	case err != nil:
		h.log.Log(r.Context(), logLevel(err), "link password not checked", "link", t.LinkID, "err", err)
		h.unavailable(w, r)
		return false
	case !ok:
		h.pages.Password(w, r, PasswordForm{Status: http.StatusUnauthorized, Error: "That password is not right."})
		return false
	}
	h.pass.setCookie(w, r, t, code, h.secure)
	return true
}
