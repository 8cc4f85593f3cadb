package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/linkqr/linkqr/internal/dbhealth"
	"github.com/linkqr/linkqr/internal/problem"
)

// requireDatabase answers 503 at once, with Retry-After, while the database
// is known to be unreachable: every API operation needs it (a credential
// seen for the first time too), and without this each request would wait
// for a connection attempt of its own before failing.
func (a *API) requireDatabase(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.Database.Up() {
			a.writeDatabaseDown(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writeDatabaseDown is the answer to a request that needs the unreachable
// database.
func (a *API) writeDatabaseDown(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", strconv.Itoa(int(dbhealth.RetryAfter/time.Second)))
	a.Problems.Write(w, r, problem.New(problem.Unavailable, "the database is unreachable; retry shortly"))
}
