package utmtemplate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/id"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/store"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/utmtemplate"
	"github.com/linkqr/linkqr/internal/validate"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func input(t *testing.T, name string, values ...string) utmtemplate.Input {
	t.Helper()
	var v [5]string
	copy(v[:], values)
	in, err := utmtemplate.ParseInput(name, v)
	if err != nil {
		t.Fatalf("ParseInput(%q, %q): %v", name, values, err)
	}
	return in
}

func TestParseInput(t *testing.T) {
	t.Parallel()
	in := input(t, "  Newsletter ", " newsletter", "", "spring")
	if in.Name.String() != "Newsletter" || in.UTM.Get(link.UTMSource) != "newsletter" || in.UTM.Get(link.UTMMedium) != "" || in.UTM.Get(link.UTMCampaign) != "spring" {
		t.Errorf("parsed %+v", in)
	}
	for _, c := range []struct {
		name     string
		values   [5]string
		pointers string
	}{
		{"", [5]string{"x"}, "/name"},
		{strings.Repeat("n", 61), [5]string{"x"}, "/name"},
		{"No values", [5]string{" ", "", "\t"}, "/utm_source"},
		{"Bad", [5]string{"", strings.Repeat("m", 201), "", "a\nb"}, "/utm_medium /utm_term"},
		{"line\nbreak", [5]string{"", "", "", "", "x"}, "/name"},
	} {
		_, err := utmtemplate.ParseInput(c.name, c.values)
		var errs validate.Errors
		if !errors.As(err, &errs) {
			t.Errorf("%q %q: %v, want validate.Errors", c.name, c.values, err)
			continue
		}
		var got []string
		for _, e := range errs {
			got = append(got, e.Pointer)
		}
		if strings.Join(got, " ") != c.pointers {
			t.Errorf("%q %q: pointers %v, want %s", c.name, c.values, got, c.pointers)
		}
	}
}

// TestTemplatesOfAWorkspace: names are unique per workspace in any letter
// case (another workspace may use the same), 50 at most, listed by name;
// another workspace's template is not found by any operation; a save that
// changes nothing leaves updated_at alone.
func TestTemplatesOfAWorkspace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testkit.DB(t)
	a, b := testkit.NewTenant(t, pool), testkit.NewTenant(t, pool)
	s := utmtemplate.NewService(store.NewDB(pool))

	first, err := s.Create(ctx, a.WorkspaceID, input(t, "Newsletter", "newsletter"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, a.WorkspaceID, input(t, "NEWSLETTER", "other")); !errors.Is(err, utmtemplate.ErrNameTaken) {
		t.Errorf("the same name in other letters: %v", err)
	}
	theirs, err := s.Create(ctx, b.WorkspaceID, input(t, "Newsletter", "theirs"))
	if err != nil {
		t.Fatalf("another workspace's name: %v", err)
	}
	for _, op := range []func() error{
		func() error { _, err := s.Get(ctx, a.WorkspaceID, theirs.ID); return err },
		func() error { _, err := s.Update(ctx, a.WorkspaceID, theirs.ID, input(t, "Mine", "x")); return err },
		func() error { _, err := s.Delete(ctx, a.WorkspaceID, theirs.ID); return err },
	} {
		if err := op(); !errors.Is(err, id.ErrNotFound) {
			t.Errorf("another workspace's template: %v, want not found", err)
		}
	}
	if got, err := s.Get(ctx, b.WorkspaceID, theirs.ID); err != nil || got.UTM.Get(link.UTMSource) != "theirs" {
		t.Errorf("the other workspace's template after the attempts: %+v %v", got, err)
	}

	same, err := s.Update(ctx, a.WorkspaceID, first.ID, input(t, "Newsletter", "newsletter"))
	if err != nil || !same.UpdatedAt.Equal(first.UpdatedAt) {
		t.Errorf("a save that changes nothing: %v, updated_at %v → %v", err, first.UpdatedAt, same.UpdatedAt)
	}

	for i := 2; i <= utmtemplate.MaxPerWorkspace; i++ {
		if _, err := s.Create(ctx, a.WorkspaceID, input(t, fmt.Sprintf("T%02d", i), "x")); err != nil {
			t.Fatalf("template %d: %v", i, err)
		}
	}
	if _, err := s.Create(ctx, a.WorkspaceID, input(t, "One too many", "x")); !errors.Is(err, utmtemplate.ErrLimit) {
		t.Errorf("template 51: %v, want ErrLimit", err)
	}
	list, err := s.List(ctx, a.WorkspaceID)
	if err != nil || len(list) != utmtemplate.MaxPerWorkspace || list[len(list)-1].Name.String() != "T50" || list[0].Name.String() != "Newsletter" {
		t.Errorf("list: %d templates, %v", len(list), err)
	}
}
