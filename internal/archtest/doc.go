// Package archtest holds the import rules of the house (docs/architecture.md "Layering") as a test
// run by `make lint` and `make test`: dependencies point inward, handlers
// never write SQL, each owner's sqlc output (internal/<owner>/internal/<owner>db,
// private to it by Go's internal/ rule) stays out of even its exported
// signatures, and the domain knows no HTML. It has no code of its own.
package archtest
