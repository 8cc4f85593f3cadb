package testkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/linkqr/linkqr/internal/testkit/strict"
)

// Where Debian installs Chromium and its default fonts. Chromium is looked
// up on PATH when it is elsewhere.
const (
	chromiumPath = "/usr/bin/chromium"
	dejaVuDir    = "/usr/share/fonts/truetype/dejavu" // fonts-dejavu-core
)

// ChromiumWidth and ChromiumHeight are the window and viewport every tab
// starts with, in CSS pixels at a device scale factor of 1.
const (
	ChromiumWidth  = 1280
	ChromiumHeight = 900
)

// chromiumTimeout bounds everything a test does with its browser, so a page
// that never shows what a test waits for fails the test instead of hanging it.
const chromiumTimeout = 150 * time.Second

// Chromium starts a headless Chromium with a fresh profile for the test and
// returns its first tab, set up by [Tab]. Options in extra (a user agent,
// host-resolver rules) come after the defaults and override them. The
// browser closes when the test ends.
//
// What a page measures must not depend on the machine, so the browser sees
// only the DejaVu fonts (through its own fontconfig file: text is as wide on
// every machine, whatever else is installed), an en-US locale and a
// 1280 × 900 window at a device scale factor of 1.
func Chromium(t testing.TB, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	strict.SkipShort(t, "a Chromium browser test")
	path := chromiumPath
	if _, err := os.Stat(path); err != nil {
		p, lookErr := exec.LookPath("chromium")
		if lookErr != nil {
			SkipUnlessStrict(t, "chromium is not installed ("+chromiumPath+")")
		}
		path = p
	}
	fonts := fontconfigFile(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("lang", "en-US"),
		chromedp.WindowSize(ChromiumWidth, ChromiumHeight),
		chromedp.Flag("force-device-scale-factor", "1"),
		chromedp.Env("FONTCONFIG_FILE="+fonts),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, extra...)...)
	t.Cleanup(cancelAlloc)
	return Tab(actx, t)
}

// Tab opens a tab in the browser of ctx (a new browser for an allocator's
// context) and sets it up so that a page behaves the same whatever else the
// machine or the test does:
//
//   - focus emulation: the page has the focus (document.hasFocus(), :focus,
//     :focus-visible) whichever tab or window has the system's. Without it a
//     tab has it only after an input event and until another tab takes it,
//     and a check of focus styles follows the browser build and the order of
//     a test's steps (Chromium 148 read "outline: none" on a focused input).
//   - device metrics: a ChromiumWidth × ChromiumHeight viewport at a device
//     scale factor of 1, whatever the display says.
//
// Open every tab through it, so a new test gets the same page.
func Tab(ctx context.Context, t testing.TB) context.Context {
	t.Helper()
	ctx, cancelTab := chromedp.NewContext(ctx)
	ctx, cancelTimeout := context.WithTimeout(ctx, chromiumTimeout)
	t.Cleanup(func() { cancelTimeout(); cancelTab() })
	if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(ChromiumWidth, ChromiumHeight), chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// fontconfigFile writes a fontconfig file that offers Chromium the DejaVu
// fonts and nothing else: monospace is DejaVu Sans Mono and every other
// family a page names (system-ui, Arial, …) is DejaVu Sans. Hinting is off,
// so glyph widths do not follow the machine's settings either.
func fontconfigFile(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dejaVuDir, "DejaVuSans.ttf")); err != nil {
		SkipUnlessStrict(t, "the DejaVu fonts are not installed ("+dejaVuDir+", Debian's fonts-dejavu-core)")
	}
	dir := t.TempDir()
	conf := fmt.Sprintf(`<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <dir>%s</dir>
  <cachedir>%s</cachedir>
  <alias binding="same"><family>monospace</family><prefer><family>DejaVu Sans Mono</family></prefer></alias>
  <match target="pattern"><edit name="family" mode="append_last"><string>DejaVu Sans</string></edit></match>
  <match target="font">
    <edit name="antialias" mode="assign"><bool>true</bool></edit>
    <edit name="hinting" mode="assign"><bool>false</bool></edit>
    <edit name="hintstyle" mode="assign"><const>hintnone</const></edit>
    <edit name="rgba" mode="assign"><const>none</const></edit>
  </match>
</fontconfig>
`, dejaVuDir, filepath.Join(dir, "cache"))
	path := filepath.Join(dir, "fonts.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
