package link

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/validate"
)

// TestParseFilter: the one reading of a list's filters, for the API and
// the UI alike.
func TestParseFilter(t *testing.T) {
	t.Parallel()
	parse := func(raw string) (Filter, string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			t.Fatal(err)
		}
		var errs validate.Errors
		f := ParseFilter(q, "/query", &errs)
		var out []string
		for _, e := range errs {
			out = append(out, e.Pointer+" "+e.Detail)
		}
		return f, "[" + strings.Join(out, "; ") + "]"
	}
	// Empty values are no filter (a form's "any"), whatever the parameter.
	if f, errs := parse("q=&status=&domain=&tag=&tag=%20"); f.Filtered || errs != "[]" {
		t.Errorf("empty values: %+v %s", f, errs)
	}
	f, errs := parse("q=+shop+&status=paused&domain=Go.Example.COM&tag=Print&tag=print+&tag=spring")
	if errs != "[]" || !f.Filtered || f.Search.Term.String() != "shop" || f.Search.State != StatePaused || f.Domain != "go.example.com" ||
		!slices.Equal(f.Tags, []string{"print", "spring"}) || len(f.Search.Tags) != 2 {
		t.Errorf("parsed: %+v %s", f, errs)
	}
	// Tags count once after normalisation: eleven spellings of one tag are one.
	if f, errs := parse(strings.Repeat("tag=A&tag=a+&", 6)); errs != "[]" || !slices.Equal(f.Tags, []string{"a"}) {
		t.Errorf("repeated tag: %+v %s", f, errs)
	}
	var many []string
	for i := range MaxTagsPerLink + 1 {
		many = append(many, fmt.Sprintf("tag=t%d", i))
	}
	if f, errs := parse(strings.Join(many, "&")); !strings.Contains(errs, "/query/tag") || len(f.Tags) != MaxTagsPerLink {
		t.Errorf("11 tags: %+v %s", f, errs)
	}
	for raw, pointer := range map[string]string{"status=gone": "/query/status", "domain=not+a+host": "/query/domain", "tag=a/b": "/query/tag"} {
		if _, errs := parse(raw); !strings.Contains(errs, pointer) {
			t.Errorf("%s: %s, want %s", raw, errs, pointer)
		}
	}
}
