package api_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/testkit"
)

// utmOf is a link object's five UTM fields, nil for null.
func utmOf(l map[string]any) []any {
	return []any{l["utm_source"], l["utm_medium"], l["utm_campaign"], l["utm_term"], l["utm_content"]}
}

// TestCreateLinkUTM201: the five parameters are stored trimmed, an empty
// or null one is absent (null in the answer), target_url stays as given;
// a link created without them shows five nulls; the link.created event
// carries them too.
func TestCreateLinkUTM201(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	l := f.create(t, `{"target_url":"https://example.com/menu?utm_source=x","utm_source":"  newsletter ","utm_medium":"email",
		"utm_campaign":"spring sale","utm_term":"","utm_content":null}`)
	if want := []any{"newsletter", "email", "spring sale", nil, nil}; !reflect.DeepEqual(utmOf(l), want) {
		t.Errorf("created %v, want %v", utmOf(l), want)
	}
	if l["target_url"] != "https://example.com/menu?utm_source=x" {
		t.Errorf("target_url %v: must stay as given", l["target_url"])
	}
	plain := f.create(t, `{"target_url":"https://example.com/"}`)
	if want := []any{nil, nil, nil, nil, nil}; !reflect.DeepEqual(utmOf(plain), want) {
		t.Errorf("a link without parameters shows %v", utmOf(plain))
	}
	created := f.events(t)[0]["link"].(map[string]any)
	if !reflect.DeepEqual(utmOf(created), utmOf(l)) {
		t.Errorf("link.created carries %v", utmOf(created))
	}
	got := f.get(t, f.token, l["id"].(string))
	if !reflect.DeepEqual(got, l) {
		t.Errorf("GET %v, want the create's answer %v", got, l)
	}
}

// TestLinkUTM422: every bad value is refused at its own pointer, in one
// answer, on create, PATCH and in a bulk item; nothing is created or
// changed.
func TestLinkUTM422(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	long := strings.Repeat("a", 201)
	for body, pointers := range map[string]string{
		`{"target_url":"https://e.com","utm_source":"` + long + `"}`:                             "/utm_source",
		`{"target_url":"https://e.com","utm_medium":42}`:                                         "/utm_medium",
		`{"target_url":"https://e.com","utm_campaign":"tab\there"}`:                              "/utm_campaign",
		`{"target_url":"https://e.com","utm_term":"nul\u0000"}`:                                  "/utm_term",
		`{"target_url":"https://e.com","utm_content":["x"]}`:                                     "/utm_content",
		`{"target_url":"https://e.com","utm_source":"line\nbreak","utm_content":"` + long + `"}`: "/utm_source /utm_content",
		`{"target_url":"https://e.com","utm_id":"x"}`:                                            "/utm_id",
	} {
		p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links", f.token, body), 422, "validation-failed")
		var got []string
		for _, e := range p["errors"].([]any) {
			got = append(got, e.(map[string]any)["pointer"].(string))
		}
		if strings.Join(got, " ") != pointers {
			t.Errorf("%.90s: pointers %v, want %s", body, got, pointers)
		}
	}
	p := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links", f.token, `{"target_url":"https://e.com","utm_source":"`+long+`"}`), 422, "validation-failed")
	if d := p["errors"].([]any)[0].(map[string]any)["detail"]; d != "must be at most 200 characters long" {
		t.Errorf("detail %q", d)
	}

	l := f.create(t, `{"target_url":"https://e.com","utm_source":"keep"}`)
	for body, ptr := range map[string]string{
		`{"utm_source":"` + long + `"}`: "/utm_source",
		`{"utm_medium":false}`:          "/utm_medium",
		`{"utm_term":"a\u0007b"}`:       "/utm_term",
	} {
		p := testkit.Problem(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+l["id"].(string), f.token, body), 422, "validation-failed")
		if got := p["errors"].([]any)[0].(map[string]any)["pointer"]; got != ptr {
			t.Errorf("PATCH %s: pointer %v, want %s", body, got, ptr)
		}
	}
	bulk := testkit.Problem(t, f.srv.Do(t, "POST", "/api/v1/links/bulk", f.token,
		`{"atomic":true,"links":[{"target_url":"https://e.com/1"},{"target_url":"https://e.com/2","utm_campaign":"`+long+`"}]}`), 422, "validation-failed")
	if got := bulk["errors"].([]any)[0].(map[string]any)["pointer"]; got != "/links/1/utm_campaign" {
		t.Errorf("bulk pointer %v", got)
	}
	if ev := f.events(t); len(ev) != 1 {
		t.Errorf("refused requests wrote events: %d", len(ev))
	}
	got := f.get(t, f.token, l["id"].(string))
	if got["utm_source"] != "keep" {
		t.Errorf("a refused PATCH changed the link: %v", utmOf(got))
	}
}

// TestUpdateLinkUTM: a PATCH changes only the parameters it names; null
// and "" remove one; link.updated's previous_attributes hold exactly the
// old values of those that changed (null for absent ones); a PATCH that
// changes nothing writes nothing.
func TestUpdateLinkUTM(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	l := f.create(t, `{"target_url":"https://e.com/","utm_source":"newsletter","utm_medium":"email"}`)
	id := l["id"].(string)
	patch := func(body string) map[string]any {
		t.Helper()
		return testkit.JSON(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+id, f.token, body), 200)
	}
	lastPrevious := func() map[string]any {
		t.Helper()
		ev := f.events(t)
		last := ev[len(ev)-1]
		if last["_type"] != "link.updated" {
			t.Fatalf("last event %v", last)
		}
		return last["previous_attributes"].(map[string]any)
	}

	up := patch(`{"utm_source":"social","utm_campaign":"spring"}`)
	if want := []any{"social", "email", "spring", nil, nil}; !reflect.DeepEqual(utmOf(up), want) {
		t.Errorf("after the PATCH %v, want %v", utmOf(up), want)
	}
	if prev := lastPrevious(); !reflect.DeepEqual(prev, map[string]any{"utm_source": "newsletter", "utm_campaign": nil}) {
		t.Errorf("previous_attributes %v", prev)
	}

	n := len(f.events(t))
	same := patch(`{"utm_source":" social ","utm_term":null}`)
	if same["updated_at"] != up["updated_at"] || len(f.events(t)) != n {
		t.Error("a PATCH that changes nothing wrote something")
	}

	cleared := patch(`{"utm_medium":null,"utm_campaign":""}`)
	if want := []any{"social", nil, nil, nil, nil}; !reflect.DeepEqual(utmOf(cleared), want) {
		t.Errorf("after removing %v, want %v", utmOf(cleared), want)
	}
	if prev := lastPrevious(); !reflect.DeepEqual(prev, map[string]any{"utm_medium": "email", "utm_campaign": "spring"}) {
		t.Errorf("previous_attributes %v", prev)
	}
	if cleared["target_url"] != "https://e.com/" {
		t.Errorf("target_url changed: %v", cleared["target_url"])
	}
}

// TestUTMOtherWorkspace404: another workspace's link cannot be given
// parameters (404, like any of its ids), and its own stay as they were.
func TestUTMOtherWorkspace404(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	theirs := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links", f.otherTk, `{"target_url":"https://e.com/","utm_source":"theirs"}`), 201)
	testkit.Problem(t, f.srv.Do(t, "PATCH", "/api/v1/links/"+theirs["id"].(string), f.token, `{"utm_source":"mine"}`), 404, "not-found")
	got := f.get(t, f.otherTk, theirs["id"].(string))
	if got["utm_source"] != "theirs" {
		t.Errorf("the other workspace's link: %v", utmOf(got))
	}
}

// TestBulkCreateUTM: bulk items take the parameters like a single create.
func TestBulkCreateUTM(t *testing.T) {
	t.Parallel()
	f := newLinksFixture(t)
	res := testkit.JSON(t, f.srv.Do(t, "POST", "/api/v1/links/bulk", f.token,
		`{"links":[{"target_url":"https://e.com/1","utm_source":"a","utm_content":"c"},{"target_url":"https://e.com/2"}]}`), 200)
	data := res["data"].([]any)
	first := data[0].(map[string]any)["link"].(map[string]any)
	second := data[1].(map[string]any)["link"].(map[string]any)
	if !reflect.DeepEqual(utmOf(first), []any{"a", nil, nil, nil, "c"}) || !reflect.DeepEqual(utmOf(second), []any{nil, nil, nil, nil, nil}) {
		t.Errorf("bulk links %v %v", utmOf(first), utmOf(second))
	}
}
