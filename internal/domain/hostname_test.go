package domain

import (
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/hostname"
)

func TestServiceRefusesOwnHosts(t *testing.T) {
	t.Parallel()
	s := NewService(Options{ReservedHosts: []string{"App.Example.com", "qr.example"}}, nil)
	for _, in := range []string{"app.example.com", "QR.example."} {
		if _, err := s.ParseHostname(in); err == nil || !strings.Contains(err.Error(), "own hostname") {
			t.Errorf("ParseHostname(%q): %v", in, err)
		}
	}
	if _, err := s.ParseHostname("go.example.com"); err != nil {
		t.Errorf("a custom domain refused: %v", err)
	}
}

func TestRecordName(t *testing.T) {
	t.Parallel()
	if h, _ := hostname.Parse("go.acme.com"); RecordName(h) != "_linkqr.go.acme.com" {
		t.Errorf("record name %q", RecordName(h))
	}
}
