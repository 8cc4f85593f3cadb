package linkcsv

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/linkqr/linkqr/internal/csvout"
	"github.com/linkqr/linkqr/internal/hostname"
	"github.com/linkqr/linkqr/internal/link"
	"github.com/linkqr/linkqr/internal/validate"
)

// Limits of an import (docs/ui.md): a file larger than MaxImportBytes or
// with more than MaxImportRows rows is refused as a whole, with a message
// saying so, before anything is checked or stored.
const (
	MaxImportBytes = 10 << 20
	MaxImportRows  = 50_000
)

// ImportColumns are the columns an import reads; target_url is required,
// every other column (such as the rest of an export's) is ignored.
var ImportColumns = append([]string{"target_url", "title", "code", "domain", "tags", "expires_at"}, link.UTMNames()...)

// ErrTooLarge is the error of Parse and Reader for a file over MaxImportBytes.
var ErrTooLarge = fmt.Errorf("the file is larger than %d MiB; split it into several files", MaxImportBytes>>20)

// ImportOptions are the choices of an import.
type ImportOptions struct {
	// KeepCodes keeps the codes of the file's code column; when false every
	// link gets a generated code (to re-import an export on the same
	// instance, where codes are taken by the exported links).
	KeepCodes bool
	// Now is the time expiries must be after.
	Now time.Time
}

// ColumnError is why a row cannot be imported: the column and the rule.
type ColumnError struct {
	Column  string
	Message string
}

// Error is "column: message".
func (e ColumnError) Error() string { return e.Column + ": " + e.Message }

// Row is one data row of an import, parsed once: the link to create, or
// the reasons it cannot be.
type Row struct {
	// Number is the row's number as a spreadsheet shows it: the header is
	// row 1, the first link row 2.
	Number int
	Input  link.CreateInput
	Errors []ColumnError // empty: Input is valid
}

// Valid reports whether the row can be created (as far as its own cells
// tell; a taken code or an unusable domain is found by the database).
func (r Row) Valid() bool { return len(r.Errors) == 0 }

// Message joins the row's errors into one sentence for a table cell.
func (r Row) Message() string {
	parts := make([]string, len(r.Errors))
	for i, e := range r.Errors {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// FileError is a refusal of the file as a whole (a missing target_url
// column, malformed CSV, too many rows): nothing of it is imported.
type FileError struct{ Message string }

func (e *FileError) Error() string { return e.Message }

// Parse reads a whole import file held in memory, as Reader reads one
// from a stream (tests and small callers; the upload, its dry run and its
// job read streams).
func Parse(data []byte, opts ImportOptions) ([]Row, error) {
	r, err := NewReader(bytes.NewReader(data), nil, opts)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
}

// columns maps each read column to its index in a row (-1: absent).
type columns map[string]int

// columnsOf reads the header: names compared trimmed and lowercase.
func columnsOf(header []string) (columns, error) {
	cols := columns{}
	for _, c := range ImportColumns {
		cols[c] = -1
	}
	for i, h := range header {
		name := strings.ToLower(strings.TrimSpace(h))
		at, known := cols[name]
		switch {
		case !known:
			continue // another column (e.g. an export's id or scan_count): ignored
		case at >= 0:
			return nil, &FileError{fmt.Sprintf("the header names the column %s twice (columns %d and %d)", name, at+1, i+1)}
		}
		cols[name] = i
	}
	if cols["target_url"] < 0 {
		return nil, &FileError{"the header row has no target_url column; the first row must name the columns, e.g. target_url,title,code,domain,tags,expires_at"}
	}
	return cols, nil
}

// csvError describes malformed CSV with the line it was found on.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &FileError{fmt.Sprintf("the file is not valid CSV: line %d: %v", pe.Line, pe.Err)}
	}
	return &FileError{"the file could not be read as CSV"}
}

// blank reports whether every cell of rec is empty.
func blank(rec []string) bool {
	for _, c := range rec {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// cell is a row's value of a column, trimmed and formula-safety undone.
func (c columns) cell(rec []string, name string) string {
	i := c[name]
	if i < 0 || i >= len(rec) {
		return ""
	}
	return csvout.Unsafe(strings.TrimSpace(rec[i]))
}

// parseRow parses one row with the API's rules.
func parseRow(n int, cols columns, rec []string, opts ImportOptions) Row {
	row := Row{Number: n}
	fail := func(col string, err error) bool {
		if err == nil {
			return true
		}
		row.Errors = append(row.Errors, ColumnError{Column: col, Message: messageOf(err)})
		return false
	}
	raw := cols.cell(rec, "target_url")
	target, err := link.ParseTargetURL(raw)
	if raw == "" {
		err = validate.Reject("is required")
	}
	if fail("target_url", err) {
		row.Input.TargetURL = target
	}
	if title, err := link.TitleRule.ParseOptional(cols.cell(rec, "title")); fail("title", err) {
		row.Input.Title = title
	}
	onDomain := false
	if d := cols.cell(rec, "domain"); d != "" {
		h, err := hostname.Parse(d)
		if fail("domain", err) {
			row.Input.Domain = &h
		}
		onDomain = true
	}
	if c := cols.cell(rec, "code"); c != "" && opts.KeepCodes {
		if code, err := link.ParseCode(c, onDomain); fail("code", err) {
			row.Input.Code = code
		}
	}
	row.Input.Tags = parseTags(cols.cell(rec, "tags"), fail)
	if e := cols.cell(rec, "expires_at"); e != "" {
		if exp, err := parseExpiry(e, opts.Now); fail("expires_at", err) {
			row.Input.ExpiresAt = &exp
		}
	}
	for _, p := range link.UTMParams {
		if v, err := link.ParseUTMValue(cols.cell(rec, p.Name())); fail(p.Name(), err) {
			row.Input.UTM = row.Input.UTM.With(p, v)
		}
	}
	return row
}

// parseTags reads a tags cell: tags separated by TagSeparator.
func parseTags(cell string, fail func(string, error) bool) link.Tags {
	if cell == "" {
		return link.Tags{}
	}
	var raw []string
	for _, t := range strings.Split(cell, TagSeparator) {
		if strings.TrimSpace(t) != "" {
			raw = append(raw, t)
		}
	}
	var errs validate.Errors
	tags := link.ParseTags(raw, "", &errs)
	for _, e := range errs {
		msg := e.Detail
		var i int
		if _, err := fmt.Sscanf(e.Pointer, "/%d", &i); err == nil && i < len(raw) {
			msg = fmt.Sprintf("tag %q %s", strings.TrimSpace(raw[i]), e.Detail)
		}
		fail("tags", validate.Reject(msg))
	}
	return tags
}

// expiryLayouts are the forms an expires_at cell may take: RFC 3339 (an
// export's), or a UTC date and time as spreadsheets write them.
var expiryLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"}

// parseExpiry reads an expires_at cell and applies the API's rule.
func parseExpiry(s string, now time.Time) (link.Expiry, error) {
	for _, layout := range expiryLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return link.ParseExpiry(t, now)
		}
	}
	return link.Expiry{}, validate.Reject("must be a date and time such as 2026-12-31T18:00:00Z (RFC 3339; without a zone it is UTC)")
}

// messageOf is a validation error's rule ("must be …") without a pointer.
func messageOf(err error) string {
	var verrs validate.Errors
	if errors.As(err, &verrs) && len(verrs) > 0 {
		parts := make([]string, len(verrs))
		for i, e := range verrs {
			parts[i] = e.Detail
		}
		return strings.Join(parts, "; ")
	}
	return err.Error()
}
