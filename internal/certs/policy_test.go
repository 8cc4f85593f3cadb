package certs

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
)

// answers is a scripted domains table: each host's servable answer, or an
// error for every host (the database is away).
type answers struct {
	mu   sync.Mutex
	ok   map[string]bool
	err  error
	asks []string
}

func (a *answers) allowed(_ context.Context, host string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asks = append(a.asks, host)
	return a.ok[host], a.err
}

// TestPolicy: names are asked about as the domains table spells them; a
// host found servable stays served while the database cannot answer, one
// never found servable (or removed) does not.
func TestPolicy(t *testing.T) {
	t.Parallel()
	db := &answers{ok: map[string]bool{"go.acme.com": true, "xn--bcher-kva.example": true}}
	m, err := New(Options{Allowed: db.allowed, Directory: "https://ca.example/dir", Key: make([]byte, 32), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, host := range []string{"GO.acme.com.", "go.acme.com:80", "bücher.example"} {
		if err := m.policy(ctx, host); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
	if want := []string{"go.acme.com", "go.acme.com", "xn--bcher-kva.example"}; !slices.Equal(db.asks, want) {
		t.Errorf("asked about %q, want %q", db.asks, want)
	}
	for _, host := range []string{"other.acme.com", "", "bad host"} {
		if err := m.policy(ctx, host); !errors.Is(err, errNotServable) {
			t.Errorf("%q: %v, want errNotServable", host, err)
		}
	}

	db.err = errors.New("connection refused")
	if err := m.policy(ctx, "go.acme.com"); err != nil {
		t.Errorf("a servable host during an outage: %v", err)
	}
	if err := m.policy(ctx, "other.acme.com"); err == nil || errors.Is(err, errNotServable) {
		t.Errorf("an unknown host during an outage: %v, want the database's error", err)
	}
	db.err = nil
	delete(db.ok, "go.acme.com") // the domain is removed
	if err := m.policy(ctx, "go.acme.com"); !errors.Is(err, errNotServable) {
		t.Errorf("a removed domain: %v", err)
	}
	db.err = errors.New("connection refused")
	if err := m.policy(ctx, "go.acme.com"); err == nil {
		t.Error("a removed domain is served again during an outage")
	}
}
