package redirect

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/analytics"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/ratelimit"
	"github.com/linkqr/linkqr/internal/secrethash"
)

// A password-protected link (docs/targeting.md) answers its form page
// (200) until the visitor sends the right password, then 302 with a
// cookie for that link for PasswordCookieTTL. Guesses are throttled per
// client address and link and per link from all addresses together, and
// each is counted before it is checked (given back when it was right),
// so concurrent guesses cannot slip past the count; with Redis the counts
// are every instance's together (ratelimit.Redis), so N instances do not
// allow N times the guesses. A bot or link preview
// gets the form and never the target, whatever it sends, and is not
// counted.
const (
	PasswordCookieTTL = 24 * time.Hour
	// MaxGuesses wrong passwords per address and link in GuessWindow;
	// after that the form answers 429 to that address until the window
	// ends.
	MaxGuesses  = 5
	GuessWindow = 15 * time.Minute
	// MaxLinkGuesses wrong passwords per link from all addresses in
	// LinkGuessWindow; after that the form answers 429 to everyone, the
	// right password included, until the window ends.
	MaxLinkGuesses  = 20
	LinkGuessWindow = 10 * time.Minute
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
	key []byte // HMAC key of the cookies (derived from the secret key)
	// guesses counts wrong guesses per address and link and per link:
	// across instances when it is shared through Redis.
	guesses ratelimit.Counter
	now     func() time.Time
}

func newPasswords(key []byte, guesses ratelimit.Counter) *passwords {
	if guesses == nil {
		guesses = ratelimit.NewCounts(nil)
	}
	return &passwords{key: key, guesses: guesses, now: time.Now}
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

// throttledError: too many wrong guesses from this address, or at this
// link; After is when the window that refuses ends.
type throttledError struct {
	After time.Duration
	Link  bool // the link's own limit, not the address's
}

func (e *throttledError) Error() string { return "too many wrong passwords" }

// check verifies a guess through the process-wide argon2id limiter, in
// the share of the link's workspace (secrethash.ErrBusy when it is full,
// which counts against nobody). The guess is counted, against the
// address and the link, before it is verified, and given back when it
// was right (or was not verified).
func (p *passwords) check(ctx context.Context, ip netip.Addr, t *link.Target, guess string) (bool, error) {
	windows := guessWindows(ip, t.LinkID)
	full, wait, err := p.guesses.Take(ctx, windows...)
	if err != nil {
		return false, err
	}
	if full >= 0 {
		return false, &throttledError{After: wait, Link: full == 0}
	}
	ok, err := secrethash.Compare(ctx, t.WorkspaceID, guess, t.PasswordHash)
	if err != nil || ok {
		// A give-back that fails leaves the guess counted until its
		// window ends: never fewer guesses counted than were judged.
		_ = p.guesses.Give(context.WithoutCancel(ctx), windows...)
	}
	return ok, err
}

// guessWindows are a guess's counts: the link's from every address (first,
// so that it is the one reported when both are full), then the address's.
// Both keys carry the link in a hash tag, as one Redis script counts them.
func guessWindows(ip netip.Addr, linkID uuid.UUID) []ratelimit.Window {
	tag := "link-guesses:{" + linkID.String() + "}"
	return []ratelimit.Window{
		{Key: tag, Limit: MaxLinkGuesses, Length: LinkGuessWindow},
		{Key: tag + ":" + ip.Unmap().String(), Limit: MaxGuesses, Length: GuessWindow},
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
	var throttled *throttledError
	switch {
	case errors.As(err, &throttled):
		secs := max(1, int(math.Ceil(throttled.After.Seconds())))
		mins := (secs + 59) / 60
		wait := strconv.Itoa(mins) + " minutes"
		if mins == 1 {
			wait = "a minute"
		}
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		msg := "Too many wrong passwords. Please try again in " + wait + "."
		if throttled.Link {
			msg = "This link has had too many wrong passwords. Please try again in " + wait + "."
		}
		h.pages.Password(w, r, PasswordForm{Status: http.StatusTooManyRequests, Error: msg})
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
