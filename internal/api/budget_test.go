package api_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/budget"
	"github.com/linkqr/linkqr/internal/testkit"
)

var (
	bombOnce sync.Once
	bombPNG  []byte
)

// bomb16 is the logo: a small PNG file (tens of KiB) that
// declares 2048 × 2048 pixels of 16-bit RGBA, 32 MiB once decoded.
func bomb16(t *testing.T) []byte {
	t.Helper()
	bombOnce.Do(func() {
		img := image.NewNRGBA64(image.Rect(0, 0, 2048, 2048))
		draw.Draw(img, img.Bounds(), image.NewUniform(color.NRGBA64{0xE5E5, 0x3939, 0x3535, 0xffff}), image.Point{}, draw.Src)
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			panic(err)
		}
		bombPNG = buf.Bytes()
	})
	return bombPNG
}

// A logo's decode is admitted by its cost from the header (pixels ×
// channels × bytes per sample), not by its file's size: while the
// workspace's share of the Logo budget is taken, the 16-bit logo is 429
// rate-limited; while the process's is, 503 unavailable; both with
// Retry-After and nothing decoded. Not parallel: it replaces the process's
// budgets.
func TestQRDesignLogoAdmittedByDecodeCost(t *testing.T) {
	limits := budget.Limits()
	limits[budget.Logo] = budget.Limit{Process: 80 * budget.MiB, Workspace: 64 * budget.MiB, RetryAfter: 2e9, What: "images being decoded"}
	b := budget.New(limits)
	defer budget.SetProcess(b)()

	f := newLinksFixture(t)
	id := f.create(t, `{"target_url":"https://example.com"}`)["id"].(string)
	path := "/api/v1/links/" + id + "/qr/design"
	raw := bomb16(t)
	if len(raw) > 256<<10 {
		t.Fatalf("the test logo is %d bytes, over the upload limit", len(raw))
	}
	body := `{"ecc":"H","logo":` + jsonString(dataURI("image/png", raw)) + `}`

	// Another decode of the same workspace holds 30 MiB: 30 + 40 > 64.
	held, err := b.Admit(context.Background(), budget.Logo, f.tenant.WorkspaceID, 30*budget.MiB)
	if err != nil {
		t.Fatal(err)
	}
	resp := f.srv.Do(t, "PUT", path, f.token, body)
	if got := resp.Header.Get("Retry-After"); got != "2" {
		t.Errorf("429: Retry-After %q, want 2", got)
	}
	testkit.Problem(t, resp, 429, "rate-limited")
	held()

	// Other workspaces' decodes hold 50 MiB of the process's 80.
	held, err = b.Admit(context.Background(), budget.Logo, uuid.New(), 50*budget.MiB)
	if err != nil {
		t.Fatal(err)
	}
	resp = f.srv.Do(t, "PUT", path, f.token, body)
	if got := resp.Header.Get("Retry-After"); got != "2" {
		t.Errorf("503: Retry-After %q, want 2", got)
	}
	testkit.Problem(t, resp, 503, "unavailable")
	held()
	if s := b.Stats(budget.Logo); s.Admitted != 2 || s.Refusals != 2 || s.InUse != 0 {
		t.Fatalf("after the refusals: %+v (no decode may have been admitted)", s)
	}
	// The operator sees them.
	if f.srv.MetricsURL != "" {
		resp, err := http.Get(f.srv.MetricsURL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		m, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(m), `linkqr_budget_refused_total{class="logo"} 2`) {
			t.Errorf("metrics lack the two refused decodes:\n%s", m)
		}
	}

	// With room, it is admitted, charged at least its decoded 32 MiB, and
	// given back when the request ends.
	b = budget.New(limits)
	defer budget.SetProcess(b)()
	f.srv.Do(t, "PUT", path, f.token, body).Body.Close()
	if s := b.Stats(budget.Logo); s.Admitted != 1 || s.Peak < 32*budget.MiB || s.InUse != 0 {
		t.Fatalf("after the admitted upload: %+v", s)
	}
}
