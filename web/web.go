package web

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkqr/linkqr/internal/account"
	"github.com/linkqr/linkqr/internal/apikey"
	"github.com/linkqr/linkqr/internal/clientip"
	"github.com/linkqr/linkqr/internal/config"
)

// Deps are the services the UI handlers call.
type Deps struct {
	Config   *config.Config
	Log      *slog.Logger
	Pool     *pgxpool.Pool
	Accounts *account.Service
	Keys     *apikey.Service
	ClientIP clientip.Resolver
}

// UI serves the browser pages.
type UI struct {
	Deps
}

// New returns the UI handlers.
func New(d Deps) *UI { return &UI{Deps: d} }

// Mount registers the UI routes on r.
func (u *UI) Mount(r chi.Router) {
	r.Get("/", u.home)
}

func (u *UI) home(w http.ResponseWriter, r *http.Request) {
	Render(w, r, http.StatusOK, Home())
}
