//go:build !race

package web_test

// raceEnabled: built with -race (make test), whose instrumentation keeps
// more of a request's memory live at once.
const raceEnabled = false
