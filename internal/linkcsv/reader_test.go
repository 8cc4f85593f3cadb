package linkcsv

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// readAll reads data through a Reader fed by r.
func readAll(r io.Reader, copyTo io.Writer, opts ImportOptions) ([]Row, error) {
	rd, err := NewReader(r, copyTo, opts)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for {
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
}

// TestReaderOneByteAtATime: a stream that hands over one byte per read
// (every multi-byte character cut between reads) reads as the whole file
// does, and is copied byte for byte.
func TestReaderOneByteAtATime(t *testing.T) {
	data := "\xef\xbb\xbftarget_url,title,tags\nhttps://example.com/ü,Crème brûlée 🍮,été|冬\n\nhttps://example.com/b,日本語,\n"
	var copied bytes.Buffer
	got, err := readAll(iotest.OneByteReader(strings.NewReader(data)), &copied, ImportOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Parse([]byte(data), ImportOptions{Now: now})
	if err != nil || len(want) != 2 || !reflect.DeepEqual(got, want) {
		t.Fatalf("one byte at a time: %+v, whole: %+v (%v)", got, want, err)
	}
	if copied.String() != data {
		t.Fatalf("copied %q, want the file", copied.String())
	}
}

// TestReaderRefusalOrder: a file is refused for the first reason that
// applies in the order too large, not UTF-8, then the others, wherever
// in the file each is.
func TestReaderRefusalOrder(t *testing.T) {
	badCSV := "target_url\n\"https://e.com\n" // an unclosed quote on line 2
	filler := strings.Repeat("https://example.com/aaaaaaaaaaaaaaaaaa\n", 1000)
	for name, c := range map[string]struct {
		data string
		want error
	}{
		"bad CSV, then too large":             {badCSV + strings.Repeat(filler, 300), ErrTooLarge},
		"no target_url, then not UTF-8":       {"url\n" + filler + "\xff\n", errNotUTF8},
		"not UTF-8 at the very end":           {"target_url\nhttps://e.com/\xe2\x82", errNotUTF8},
		"too many rows, then not UTF-8":       {"target_url\n" + strings.Repeat("https://e.com\n", MaxImportRows+1) + "\xc3", errNotUTF8},
		"a character cut by the 4 KiB buffer": {"target_url\n" + strings.Repeat("https://e.com/é\n", 5000), nil},
	} {
		for _, r := range []io.Reader{strings.NewReader(c.data), iotest.HalfReader(strings.NewReader(c.data))} {
			_, err := readAll(r, nil, ImportOptions{Now: now})
			if err != c.want && !(c.want == nil && err == nil) {
				t.Errorf("%s: %v, want %v", name, err, c.want)
			}
		}
	}
}

// TestReaderPassesStreamErrors: an error of the stream itself (a body
// over its limit, a connection gone) is returned as it is, not taken for
// a refusal of the file.
func TestReaderPassesStreamErrors(t *testing.T) {
	gone := errors.New("connection gone")
	r := io.MultiReader(strings.NewReader("target_url\nhttps://e.com\n"), iotest.ErrReader(gone))
	if _, err := readAll(r, nil, ImportOptions{Now: now}); !errors.Is(err, gone) {
		t.Fatalf("err = %v, want the stream's", err)
	}
	failing := writerFunc(func([]byte) (int, error) { return 0, gone })
	if _, err := readAll(strings.NewReader("target_url\nhttps://e.com\n"), failing, ImportOptions{Now: now}); !errors.Is(err, gone) {
		t.Fatalf("a failed copy: err = %v, want the writer's", err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// FuzzReader: the streamed reading agrees with a check of the whole file:
// the same rows whatever the stream's reads, and a file that is not UTF-8
// (and not too large) refused for that reason.
func FuzzReader(f *testing.F) {
	f.Add([]byte("target_url,title\nhttps://e.com,caf\xc3\xa9\n"))
	f.Add([]byte("target_url\nhttps://e.com/\xc3"))
	f.Add([]byte("target_url\n\"x\xff\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, werr := Parse(data, ImportOptions{KeepCodes: true, Now: now})
		split, serr := readAll(iotest.OneByteReader(bytes.NewReader(data)), nil, ImportOptions{KeepCodes: true, Now: now})
		if !reflect.DeepEqual(werr, serr) || !reflect.DeepEqual(whole, split) {
			t.Fatalf("whole: %v %v; one byte at a time: %v %v", whole, werr, split, serr)
		}
		if !utf8.Valid(data) && werr != errNotUTF8 {
			t.Fatalf("not UTF-8, but err = %v", werr)
		}
		if utf8.Valid(data) && werr == errNotUTF8 {
			t.Fatal("UTF-8 refused as not UTF-8")
		}
	})
}
