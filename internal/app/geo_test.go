package app_test

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/linkqr/linkqr/internal/app"
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/testkit"
)

// TestGeoIPFileThatIsNoDatabaseStopsTheStart: LINKQR_GEOIP_DB naming a
// file that is not a MaxMind database is refused at start, in one line
// that names the variable, rather than leaving every scan without a
// country.
func TestGeoIPFileThatIsNoDatabaseStopsTheStart(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/GeoLite2-Country.mmdb"
	if err := os.WriteFile(path, []byte("<html>a download page, not the database</html>"), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"LINKQR_DATA_DIR": t.TempDir(), "LINKQR_SECRET_KEY": testkit.NewSecretKey(), "LINKQR_GEOIP_DB": path}
	cfg, err := config.Load(func(k string) string { return vars[k] }, false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = app.New(t.Context(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), testkit.DB(t))
	if err == nil || !strings.HasPrefix(err.Error(), "LINKQR_GEOIP_DB=") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("start with a file that is no database: %v", err)
	}
}
