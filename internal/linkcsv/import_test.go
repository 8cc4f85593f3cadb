package linkcsv

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/csvout"
	"github.com/linkqr/linkqr/internal/link"
)

var now = time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)

func TestParseReadsTheColumnsAndIgnoresTheRest(t *testing.T) {
	data := "\xef\xbb\xbfID,Target_URL,title,code,domain,tags,expires_at,scan_count\n" +
		"lnk_1,https://example.com/a,'=SUM(1),shop-1,,Print|spring 2027|print,2027-01-02T03:04:05Z,7\n" +
		",,,,,,,\n" +
		"lnk_2,https://example.com/b,,,go.example.com,,,\n"
	rows, err := Parse([]byte(data), ImportOptions{KeepCodes: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("rows = %d, want 2 (the blank row skipped)", len(rows))
	}
	a := rows[0]
	if !a.Valid() || a.Number != 2 || a.Input.TargetURL.String() != "https://example.com/a" || a.Input.Title.String() != "=SUM(1)" ||
		a.Input.Code.String() != "shop-1" || strings.Join(a.Input.Tags.Strings(), ",") != "print,spring 2027" ||
		a.Input.ExpiresAt == nil || !a.Input.ExpiresAt.Time().Equal(time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("row 2 = %+v", a)
	}
	b := rows[1]
	if !b.Valid() || b.Number != 4 || b.Input.Domain == nil || b.Input.Domain.String() != "go.example.com" || b.Input.Title != nil {
		t.Fatalf("row 4 = %+v", b)
	}
}

func TestParseWithoutKeepingCodes(t *testing.T) {
	rows, err := Parse([]byte("target_url,code\nhttps://e.com,docs\n"), ImportOptions{Now: now})
	if err != nil || len(rows) != 1 || !rows[0].Valid() || !rows[0].Input.Code.IsZero() {
		t.Fatalf("rows %+v, err %v", rows, err)
	}
}

func TestParseNamesTheColumnOfEachError(t *testing.T) {
	data := "target_url,title,code,domain,tags,expires_at\n" +
		",x,ab,,ok|bad!,2020-01-01T00:00:00Z\n" +
		"ftp://x,,,not a host,,tomorrow\n"
	rows, err := Parse([]byte(data), ImportOptions{KeepCodes: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	got := rows[0].Message() + " / " + rows[1].Message()
	for _, want := range []string{"target_url: is required", "code: ", "tags: tag \"bad!\" may contain only", "expires_at: must be in the future",
		"target_url: must be an absolute http or https URL", "domain: ", "expires_at: must be a date and time"} {
		if !strings.Contains(got, want) {
			t.Errorf("messages %q lack %q", got, want)
		}
	}
	if rows[0].Valid() || rows[1].Valid() {
		t.Fatal("invalid rows reported valid")
	}
}

func TestParseRefusesBadFiles(t *testing.T) {
	for name, data := range map[string]string{
		"empty":         "",
		"no target_url": "url,title\nhttps://e.com,x\n",
		"twice":         "target_url,TARGET_URL\nhttps://e.com,x\n",
		"not CSV":       "target_url\n\"https://e.com\n",
		"not UTF-8":     "target_url\nhttps://e.com/\xff\n",
	} {
		_, err := Parse([]byte(data), ImportOptions{Now: now})
		var fe *FileError
		if !errors.As(err, &fe) || fe.Message == "" {
			t.Errorf("%s: err = %v, want a FileError", name, err)
		}
	}
	if _, err := Parse(make([]byte, MaxImportBytes+1), ImportOptions{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too large: %v", err)
	}
	var b bytes.Buffer
	b.WriteString("target_url\n")
	for range MaxImportRows + 1 {
		b.WriteString("https://e.com\n")
	}
	_, err := Parse(b.Bytes(), ImportOptions{Now: now})
	var fe *FileError
	if !errors.As(err, &fe) || !strings.Contains(fe.Message, "more than 50000 rows") {
		t.Errorf("too many rows: %v", err)
	}
}

// TestExportReimports: an exported row parses back to the same link.
func TestExportReimports(t *testing.T) {
	title, _ := link.ParseTitle("+1 offer")
	target, _ := link.ParseTargetURL("https://example.com/-x")
	var b bytes.Buffer
	row := make([]string, len(ExportColumns))
	l := link.Link{TargetURL: target, Title: &title}
	writeCSV(&b, ExportColumns, fillRow(row, l))
	rows, err := Parse(b.Bytes(), ImportOptions{Now: now})
	if err != nil || len(rows) != 1 || !rows[0].Valid() {
		t.Fatalf("rows %+v, err %v", rows, err)
	}
	if rows[0].Input.Title.String() != "+1 offer" || rows[0].Input.TargetURL.String() != "https://example.com/-x" {
		t.Fatalf("re-imported %+v", rows[0].Input)
	}
}

// TestUTMColumnsRoundTrip: the export writes the five UTM parameters
// (formula-safe, an absent one as an empty cell) and the import reads them
// back to the same values; a bad one is the row's message naming its column.
func TestUTMColumnsRoundTrip(t *testing.T) {
	target, _ := link.ParseTargetURL("https://example.com/?utm_source=typed")
	var utm link.UTM
	for i, s := range []string{"newsletter", "", "=spring, sale", "-10%", "Café \"ü\""} {
		v, err := link.ParseUTMValue(s)
		if err != nil {
			t.Fatal(err)
		}
		utm = utm.With(link.UTMParams[i], v)
	}
	var b bytes.Buffer
	out := csvout.New(&b) // as Export writes: formula-safe
	row := make([]string, len(ExportColumns))
	if out.Write(ExportColumns...) != nil || out.Write(fillRow(row, link.Link{TargetURL: target, UTM: utm})...) != nil || out.Flush() != nil {
		t.Fatal("write")
	}
	if !strings.Contains(b.String(), ",newsletter,,\"'=spring, sale\",'-10%,") {
		t.Errorf("exported:\n%s", b.String())
	}
	rows, err := Parse(b.Bytes(), ImportOptions{Now: now})
	if err != nil || len(rows) != 1 || !rows[0].Valid() {
		t.Fatalf("rows %+v, err %v", rows, err)
	}
	if rows[0].Input.UTM != utm || rows[0].Input.TargetURL != target {
		t.Errorf("re-imported %+v, want %+v", rows[0].Input.UTM, utm)
	}

	rows, err = Parse([]byte("target_url,UTM_Medium,utm_term\nhttps://e.com/,"+strings.Repeat("m", 201)+",\" padded \"\n"), ImportOptions{Now: now})
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %+v, err %v", rows, err)
	}
	if rows[0].Valid() || rows[0].Message() != "utm_medium: must be at most 200 characters long" {
		t.Errorf("message %q", rows[0].Message())
	}
	if rows[0].Input.UTM.Get(link.UTMTerm) != "padded" {
		t.Errorf("utm_term %q, want it trimmed", rows[0].Input.UTM.Get(link.UTMTerm))
	}
}

// FuzzParse: any input is either refused as a whole or parsed into rows
// that are each valid or carry a column error, never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte("target_url,title,code,domain,tags,expires_at\nhttps://e.com,t,abc,go.e.com,a|b,2030-01-01T00:00:00Z\n"), true)
	f.Add([]byte("target_url\n\"\n"), false)
	f.Add([]byte("x,target_url\n1\n,,,\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, keep bool) {
		rows, err := Parse(data, ImportOptions{KeepCodes: keep, Now: now})
		if err != nil {
			if rows != nil {
				t.Fatal("rows with an error")
			}
			return
		}
		for _, r := range rows {
			if r.Valid() && r.Input.TargetURL.String() == "" {
				t.Fatalf("valid row %d without a target", r.Number)
			}
			for _, e := range r.Errors {
				if e.Column == "" || e.Message == "" {
					t.Fatalf("row %d: empty error %+v", r.Number, e)
				}
			}
		}
	})
}

func writeCSV(b *bytes.Buffer, rows ...[]string) {
	w := csvWriter(b)
	for _, r := range rows {
		_ = w.Write(r)
	}
	w.Flush()
}

func csvWriter(w io.Writer) *csv.Writer { return csv.NewWriter(w) }
