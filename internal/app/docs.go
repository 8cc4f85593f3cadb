package app

import "github.com/go-chi/chi/v5"

// docsRoutes serves the OpenAPI document (/openapi.json, /openapi.yaml) and
// its rendering for browsers (/docs).
func (a *App) docsRoutes(r chi.Router) {
	_ = r
}
