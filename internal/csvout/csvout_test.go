package csvout

import (
	"bytes"
	"encoding/csv"
	"net/http/httptest"
	"strconv"
	"testing"
)

func TestSafeRoundTrip(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "plain", "", "'quoted", "'=kept"} {
		safe := Safe(s)
		if len(s) > 0 && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' || s[0] == '\r') && safe[0] != '\'' {
			t.Errorf("Safe(%q) = %q: a formula stays", s, safe)
		}
		if got := Unsafe(safe); got != s {
			t.Errorf("Unsafe(Safe(%q)) = %q", s, got)
		}
	}
}

// TestWriterGuardsAndFlushes: every cell is guarded, and rows reach the
// client every FlushEvery rows, not only at the end.
func TestWriterGuardsAndFlushes(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	w := New(rec)
	if err := w.Write("id", "=cmd|' /C calc'!A0"); err != nil {
		t.Fatal(err)
	}
	for i := range FlushEvery - 1 {
		if err := w.Write(strconv.Itoa(i), "x"); err != nil {
			t.Fatal(err)
		}
	}
	if !rec.Flushed || rec.Body.Len() == 0 {
		t.Fatalf("%d rows written and nothing flushed to the client", FlushEvery)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(rec.Body.Bytes())).ReadAll()
	if err != nil || len(rows) != FlushEvery || rows[0][1] != "'=cmd|' /C calc'!A0" {
		t.Fatalf("rows %d, first %v, err %v", len(rows), rows[0], err)
	}
}

// TestWriterLeavesTheCallersCells: a shared header (linkcsv.ExportColumns)
// is written by many exports at once; Write must not change it.
func TestWriterLeavesTheCallersCells(t *testing.T) {
	t.Parallel()
	cells := []string{"=a", "b"}
	if err := New(httptest.NewRecorder()).Write(cells...); err != nil {
		t.Fatal(err)
	}
	if cells[0] != "=a" {
		t.Errorf("Write changed its argument to %q", cells[0])
	}
}
