package testkit_test

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/testkit"
)

// focusPage has a focus style on its inputs, a line of system-ui text and
// one of monospace text.
const focusPage = `data:text/html,<style>input:focus { outline: 3px solid rgb(1, 2, 3) }</style>
<input id="a"><input id="b"><p id="ui" style="font-family: system-ui, Arial, sans-serif">linkqr</p><p id="mono" style="font-family: Menlo, monospace">linkqr</p>`

// TestChromiumTabsKeepTheirFocus: an input focused in a tab still matches
// :focus, and shows its outline, after a second tab of the same browser has
// focused an input of its own (without focus emulation the first tab reads
// document.hasFocus() false and outline "none" on Chromium 156). Tabs also
// have the fixed metrics and fonts.
func TestChromiumTabsKeepTheirFocus(t *testing.T) {
	t.Parallel()
	first := testkit.Chromium(t)
	second := testkit.Tab(first, t)
	tabs := []struct {
		name  string
		ctx   context.Context
		input string
	}{{"first tab", first, "#a"}, {"second tab", second, "#b"}}
	for _, tab := range tabs {
		if err := chromedp.Do(tab.ctx, chromedp.Navigate(focusPage), chromedp.Focus(chromedp.CSS(tab.input))); err != nil {
			t.Fatalf("%s: %v", tab.name, err)
		}
	}
	type state struct {
		HasFocus bool    `json:"hasFocus"`
		Active   string  `json:"active"`
		Focus    bool    `json:"focus"`
		Outline  string  `json:"outline"`
		Ratio    float64 `json:"ratio"`
		Width    int     `json:"width"`
		Height   int     `json:"height"`
	}
	const probe = `({hasFocus: document.hasFocus(), active: document.activeElement.id, focus: document.activeElement.matches(":focus"),
		outline: getComputedStyle(document.activeElement).outlineStyle, ratio: devicePixelRatio, width: innerWidth, height: innerHeight})`
	for _, tab := range tabs {
		s, err := chromedp.Run(tab.ctx, chromedp.Evaluate[state](probe))
		if err != nil {
			t.Fatalf("%s: %v", tab.name, err)
		}
		if !s.HasFocus || !s.Focus || s.Outline != "solid" {
			t.Errorf("%s: document.hasFocus() %v, #%s matches :focus %v, outline %q; want true, true, solid", tab.name, s.HasFocus, s.Active, s.Focus, s.Outline)
		}
		if s.Ratio != 1 || s.Width != testkit.ChromiumWidth || s.Height != testkit.ChromiumHeight {
			t.Errorf("%s: %d × %d px at a device scale factor of %v", tab.name, s.Width, s.Height, s.Ratio)
		}
	}

	if _, err := chromedp.Call(first, css.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"ui": "DejaVu Sans", "mono": "DejaVu Sans Mono"} {
		nodes, err := chromedp.Run(first, chromedp.Nodes(chromedp.CSS("#"+id)))
		if err != nil {
			t.Fatal(err)
		}
		used, err := chromedp.Call(first, css.GetPlatformFontsForNode, css.GetPlatformFontsForNodeParams{NodeID: nodes[0].NodeID})
		if err != nil {
			t.Fatal(err)
		}
		var families []string
		for _, f := range used.Fonts {
			families = append(families, f.FamilyName)
		}
		if len(families) != 1 || families[0] != want {
			t.Errorf("#%s is drawn with %q, want %s only", id, families, want)
		}
	}
}
