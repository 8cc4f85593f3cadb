package tz_test

import (
	"errors"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/tz"
)

func TestParse(t *testing.T) {
	for _, name := range append([]string{"Asia/Kathmandu", "America/Argentina/Buenos_Aires"}, tz.Common...) {
		z, err := tz.Parse(name)
		if err != nil || z.Name() != name {
			t.Errorf("Parse(%q) = %v, %v", name, z, err)
		}
	}
	for _, name := range []string{"", "Local", "Mars/Olympus", "america/new_york ", "../etc/passwd", "EST5EDT\\x"} {
		if _, err := tz.Parse(name); !errors.Is(err, tz.ErrUnknown) {
			t.Errorf("Parse(%q): %v, want ErrUnknown", name, err)
		}
	}
	if !tz.MustParse("UTC").IsUTC() || tz.UTC.Location() != time.UTC || tz.UTC.Name() != "UTC" {
		t.Error("UTC is not the zero zone")
	}
	if tz.MustParse("Asia/Kolkata").Location() != tz.MustParse("Asia/Kolkata").Location() {
		t.Error("a zone is loaded twice")
	}
	_, off := time.Date(2026, 1, 1, 0, 0, 0, 0, tz.MustParse("Asia/Kathmandu").Location()).Zone()
	if off != 5*3600+45*60 {
		t.Errorf("Kathmandu is %d s east, want +5:45", off)
	}
}
