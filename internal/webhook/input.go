package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/text"
	"github.com/linkqr/linkqr/internal/validate"
)

// Optional distinguishes a field left out of a PATCH body (Set false) from
// one given, possibly as null.
type Optional[T any] struct {
	Set   bool
	Value T
}

// Some returns a set Optional.
func Some[T any](v T) Optional[T] { return Optional[T]{Set: true, Value: v} }

// CreateInput is a request to create a subscription. The description was
// parsed at the edge (DescriptionRule); URL and events are checked here,
// because the URL's host must resolve to a public address.
type CreateInput struct {
	URL         string
	Events      []string
	Description *text.Text // nil: none
}

// UpdateInput is a PATCH: only set fields change. Status "enabled"
// re-enables a disabled subscription and forgets its failure history.
type UpdateInput struct {
	URL         Optional[string]
	Events      Optional[[]string]
	Description Optional[*text.Text]
	Status      Optional[string]
}

// DescriptionRule is a subscription's note for people: at most 500
// characters of text.
var DescriptionRule = text.Rule{Max: MaxDescriptionChars}

// ParseURL checks a webhook URL's form: absolute https (http too when
// allowHTTP), a host, at most MaxURLBytes of valid UTF-8, no user
// information, no spaces or control characters. It does not look at the
// host's addresses; the Guard does.
func ParseURL(raw string, allowHTTP bool) (*url.URL, error) {
	scheme := "an absolute https URL"
	if allowHTTP {
		scheme = "an absolute http or https URL"
	}
	switch {
	case raw == "":
		return nil, errors.New("must be " + scheme)
	case len(raw) > MaxURLBytes:
		return nil, fmt.Errorf("must be at most %d bytes long", MaxURLBytes)
	case !utf8.ValidString(raw): // url.Parse keeps such bytes, PostgreSQL refuses them
		return nil, errors.New(text.DetailNotUTF8)
	case strings.ContainsFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return nil, errors.New("must not contain spaces or control characters (percent-encode them)")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" || u.Hostname() == "" {
		return nil, errors.New("must be " + scheme)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !allowHTTP {
			return nil, errors.New("must use https")
		}
	default:
		return nil, errors.New("must be " + scheme)
	}
	if u.User != nil {
		return nil, errors.New("must not contain a user name or password")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, errors.New("must have a port between 1 and 65535")
		}
	}
	return u, nil
}

// checkURL validates the form and then the host's addresses.
func (s *Service) checkURL(ctx context.Context, pointer, raw string, errs *validate.Errors) {
	u, err := ParseURL(raw, s.guard.AllowPrivate)
	if err != nil {
		errs.Add(pointer, err.Error())
		return
	}
	if err := s.guard.CheckHost(ctx, u.Hostname()); err != nil {
		if errors.Is(err, ErrNotPublic) {
			errs.Add(pointer, "must not point to a loopback, private, link-local or otherwise non-public address")
		} else {
			errs.Add(pointer, "host could not be resolved to a public address")
		}
	}
}

// checkEvents requires a non-empty list of known, distinct event types.
func checkEvents(pointer string, events []string, errs *validate.Errors) {
	if len(events) == 0 {
		errs.Add(pointer, "must list at least one event type")
		return
	}
	seen := map[string]bool{}
	for i, e := range events {
		p := pointer + "/" + strconv.Itoa(i)
		switch {
		case !event.Known(event.Type(e)):
			errs.Add(p, fmt.Sprintf("must be one of %s", knownList()))
		case seen[e]:
			errs.Add(p, fmt.Sprintf("%q is listed twice", e))
		}
		seen[e] = true
	}
}

func knownList() string {
	names := make([]string, len(event.Types))
	for i, t := range event.Types {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// ValidateCreate checks what Create checks, creating nothing: a form that
// failed to parse a field of its own still shows every other field's
// message in one answer.
func (s *Service) ValidateCreate(ctx context.Context, in CreateInput) error {
	var errs validate.Errors
	s.checkURL(ctx, "/url", in.URL, &errs)
	checkEvents("/events", in.Events, &errs)
	return errs.Err()
}

// ValidateUpdate checks what Update checks, changing nothing.
func (s *Service) ValidateUpdate(ctx context.Context, in UpdateInput) error {
	var errs validate.Errors
	if in.URL.Set {
		s.checkURL(ctx, "/url", in.URL.Value, &errs)
	}
	if in.Events.Set {
		checkEvents("/events", in.Events.Value, &errs)
	}
	if in.Status.Set && in.Status.Value != StatusEnabled && in.Status.Value != StatusDisabled {
		errs.Add("/status", "must be enabled or disabled")
	}
	return errs.Err()
}
