package app

import (
	"github.com/linkqr/linkqr/internal/clientip"
	"github.com/linkqr/linkqr/internal/config"
	"github.com/linkqr/linkqr/internal/geo"
)

// countries is how the redirect tells a scan's country (docs/operations.md
// "Countries"): the proxy's country header, else the LINKQR_GEOIP_DB file,
// else the built-in data; with LINKQR_GEOIP_DB=off only the header. An
// .mmdb that does not open stops the start, naming the variable. A process
// that serves no redirects loads no IP data.
func (a *App) countries(cfg *config.Config, proxies clientip.Resolver) (*geo.Resolver, error) {
	var l geo.Locator
	switch {
	case !cfg.Roles.Redirect():
	case cfg.Geo.Off:
		a.Log.Info("country of scans: no IP lookups (LINKQR_GEOIP_DB=off)", "header", cfg.Geo.CountryHeader)
	case cfg.Geo.DB != "":
		db, err := geo.OpenMMDB(cfg.Geo.DB)
		if err != nil {
			return nil, &config.Error{Var: "LINKQR_GEOIP_DB", Value: cfg.Geo.DB, Reason: err.Error()}
		}
		a.closeGeo = db.Close
		a.Log.Info("country of scans: IP lookups in "+cfg.Geo.DB, "type", db.DatabaseType(), "built", db.BuildTime().Format("2006-01-02"), "header", cfg.Geo.CountryHeader)
		l = db
	default:
		l = geo.Builtin()
		a.Log.Debug("country of scans: built-in IP data", "date", geo.BuiltinDate(), "header", cfg.Geo.CountryHeader)
	}
	return geo.NewResolver(cfg.Geo.CountryHeader, proxies.FromTrustedProxy, l), nil
}
