package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestQRDesignerColourFields: each colour of the designer is a picker and
// a hex field. Without JavaScript the one that changed wins; "#RRGGBB",
// "RRGGBB" and "#RGB" are read (once, qr.ParseColourInput) and shown as
// "#rrggbb"; anything else is a message at the field, the typed text
// kept; Save stores what the field says.
func TestQRDesignerColourFields(t *testing.T) {
	t.Parallel()
	_, tn, b, _ := signedIn(t)
	path := createInForm(t, b, tn.WorkspaceExternalID(), url.Values{"target_url": {"https://example.com/"}})
	form := func(fgPicker, fgHex string) url.Values {
		return url.Values{"fg": {fgPicker}, "fg_hex": {fgHex}, "fg_was": {"#000000"}, "bg": {"#ffffff"}, "bg_hex": {"#ffffff"}, "bg_was": {"#ffffff"},
			"margin": {"4"}, "ecc": {"M"}, "modules": {"square"}, "size": {"512"}}
	}
	for _, c := range []struct{ picker, hex, want string }{
		{"#000000", "1F2A5C", "#1f2a5c"}, // the field changed: it wins
		{"#000000", "#0a3", "#00aa33"},
		{"#000080", "#000000", "#000080"},   // the picker changed
		{"#000080", " #112233 ", "#112233"}, // both: the field
	} {
		p := b.get(path + "?" + form(c.picker, c.hex).Encode())
		if got := inputValue(t, p.body, "qr-fg-hex"); got != c.want || inputValue(t, p.body, "qr-fg") != c.want ||
			!strings.Contains(p.body, "fg="+strings.TrimPrefix(c.want, "#")) {
			t.Errorf("picker %s, field %q: shows %q, want %s", c.picker, c.hex, got, c.want)
		}
		if hasTestID(p.body, "qr-fg-error") {
			t.Errorf("field %q: %s", c.hex, textOf(t, p.body, "qr-fg-error"))
		}
	}
	p := b.get(path + "?" + form("#000000", "navy").Encode())
	if got := textOf(t, p.body, "qr-fg-error"); got != "The foreground must be a hex colour such as #1A2B3C (or #RGB, such as #FFF)." {
		t.Errorf("a bad colour: %q", got)
	}
	if inputValue(t, p.body, "qr-fg-hex") != "navy" || !hasTestID(p.body, "qr-invalid") {
		t.Errorf("a bad colour: the field or the preview: %s", excerpt(p.body))
	}
	// Save (the form's post, no logo): the field's colour is the design's.
	save := form("#000000", "#1A237E")
	p = b.post(path+"/qr/design", save)
	if p.status != http.StatusSeeOther {
		t.Fatalf("save: %d %s", p.status, excerpt(p.body))
	}
	page := b.get(path)
	if inputValue(t, page.body, "qr-fg-hex") != "#1a237e" || !strings.Contains(page.body, "This link has a QR design of its own.") {
		t.Errorf("after saving: %s", excerpt(page.body))
	}
	save.Set("fg_hex", "#12")
	if p := b.post(path+"/qr/design", save); p.status != http.StatusUnprocessableEntity || !strings.HasPrefix(textOf(t, p.body, "qr-fg-error"), "The foreground must be a hex colour") {
		t.Errorf("save a bad colour: %d %s", p.status, excerpt(p.body))
	}
}
