// Package csvout is the one way linkqr writes CSV for people to open in
// a spreadsheet: the links export, the workspace archive's files, the
// audit log, a link's series and scans. Every cell goes through Safe, the
// one formula guard, and a long file is flushed to the client as it is
// written, so memory stays flat and the download starts at once.
package csvout

import (
	"encoding/csv"
	"io"
	"net/http"
	"strings"
)

// FlushEvery is how many rows a Writer buffers before it flushes them (to
// the client too, when it writes to an http.Flusher).
const FlushEvery = 500

// Writer writes formula-safe CSV rows.
type Writer struct {
	cw   *csv.Writer
	out  io.Writer
	rows int
	row  []string // the guarded cells of the row being written (the caller's are left alone)
}

// New writes CSV to out.
func New(out io.Writer) *Writer { return &Writer{cw: csv.NewWriter(out), out: out} }

// Write writes one row, each cell through Safe (cells itself is not
// changed: a header may be shared); every FlushEvery rows it flushes. It
// returns the first error of writing.
func (w *Writer) Write(cells ...string) error {
	w.row = w.row[:0]
	for _, c := range cells {
		w.row = append(w.row, Safe(c))
	}
	if err := w.cw.Write(w.row); err != nil {
		return err
	}
	if w.rows++; w.rows%FlushEvery == 0 {
		return w.Flush()
	}
	return nil
}

// Flush writes what is buffered, to the client too when the output is an
// http.Flusher, and returns the first error of writing.
func (w *Writer) Flush() error {
	w.cw.Flush()
	if f, ok := w.out.(http.Flusher); ok {
		f.Flush()
	}
	return w.cw.Error()
}

// formulaStart are the first characters that make a spreadsheet run a
// cell as a formula (or, for tab and carriage return, shift it into one).
const formulaStart = "=+-@\t\r"

// Safe makes a cell formula-safe: a value a spreadsheet would run as a
// formula (starting with =, +, -, @, a tab or a carriage return) gets a
// leading apostrophe — and so does one that already starts with
// apostrophes before such a character, so Unsafe gives back exactly what
// was written.
func Safe(s string) string {
	if guarded(s) {
		return "'" + s
	}
	return s
}

// Unsafe undoes Safe (a CSV import reads an export back).
func Unsafe(s string) string {
	if strings.HasPrefix(s, "'") && guarded(s[1:]) {
		return s[1:]
	}
	return s
}

// guarded reports whether s is apostrophes (maybe none) and then a
// formula character.
func guarded(s string) bool {
	rest := strings.TrimLeft(s, "'")
	return rest != "" && strings.ContainsRune(formulaStart, rune(rest[0]))
}
