// Package archtest holds the import rules of the house (docs/architecture.md "Layering") as a test
// run by `make lint` and `make test`: dependencies point inward, handlers
// never write SQL, sqlc output stays private to storage code (not even an
// exported signature of a domain package names its types), and the domain
// knows no HTML. It has no code of its own.
package archtest
