package testkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// AxeTags are the axe-core rule tags AxeCheck runs: WCAG 2.0 and 2.1,
// levels A and AA.
var AxeTags = []string{"wcag2a", "wcag2aa", "wcag21a", "wcag21aa"}

// AxeViolation is one failed axe-core rule on a page.
type AxeViolation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"` // CSS selectors of the first few nodes
	Nodes   int      `json:"nodes"`   // how many nodes fail it
}

// AxeCheck opens url in the tab of ctx (at the tab's current viewport),
// runs axe-core's WCAG 2.1 A and AA rules on it (AxeTags) and fails the
// test with each violation's id, impact, node count and a few node
// targets. It returns the violations, so that a test may also count them.
//
// axe-core comes from the npm registry, pinned with its integrity in
// internal/testkit/axe/package-lock.json and installed there by npm ci on
// first use (node_modules is not committed: its licence files belong to
// the package); without npm the test skips loudly (fails when strict).
// The page's Content-Security-Policy is bypassed for the check only, since
// the script is injected through the DevTools protocol.
func AxeCheck(ctx context.Context, t testing.TB, url string) []AxeViolation {
	t.Helper()
	source := axeSource(t)
	err := chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Call(ctx, cdppage.SetBypassCSP, cdppage.SetBypassCSPParams{Enabled: true})
			return err
		}),
		chromedp.Navigate(url),
		chromedp.WaitReady(chromedp.CSS("body")),
	)
	if err != nil {
		t.Fatalf("axe: open %s: %v", url, err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](source+"\n;typeof axe === 'object'")); err != nil {
		t.Fatalf("axe: inject axe-core into %s: %v", url, err)
	}
	tags := `["` + strings.Join(AxeTags, `","`) + `"]`
	violations, err := chromedp.Run(ctx, chromedp.Evaluate[[]AxeViolation](`axe.run(document, {runOnly: {type: "tag", values: `+tags+`}, resultTypes: ["violations"]})
		.then(r => r.violations.map(v => ({id: v.id, impact: v.impact || "", help: v.help, nodes: v.nodes.length,
			targets: v.nodes.slice(0, 4).map(n => n.target.join(" "))})))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe: run on %s: %v", url, err)
	}
	for _, v := range violations {
		t.Errorf("axe: %s: %s (%s, %d nodes: %s): %s", url, v.ID, v.Impact, v.Nodes, strings.Join(v.Targets, " | "), v.Help)
	}
	return violations
}

var axeScript struct {
	once   sync.Once
	source string
	err    error
}

// axeSource returns axe.min.js, installing the pinned package first when
// it is not there (once per process; a file lock keeps test processes
// from installing at the same time).
func axeSource(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("an axe-core browser check: not in the -short lane")
	}
	npm := RequireBinary(t, "npm")
	axeScript.once.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		dir := filepath.Join(filepath.Dir(file), "axe")
		script := filepath.Join(dir, "node_modules", "axe-core", "axe.min.js")
		lock, err := os.OpenFile(filepath.Join(os.TempDir(), "linkqr-axe-install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			axeScript.err = err
			return
		}
		defer lock.Close()
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
			axeScript.err = err
			return
		}
		defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck
		if _, err := os.Stat(script); err != nil {
			cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--prefer-offline")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				axeScript.err = fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out)
				return
			}
		}
		b, err := os.ReadFile(script)
		axeScript.source, axeScript.err = string(b), err
	})
	if axeScript.err != nil {
		SkipUnlessStrict(t, "axe-core is not available: "+axeScript.err.Error())
	}
	return axeScript.source
}
