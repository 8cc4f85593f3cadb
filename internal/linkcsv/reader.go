package linkcsv

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Reader reads an import file from a stream, one row at a time: it holds
// its 4 KiB buffer and the row being read, never the file, so an upload,
// its dry run and its job take the same memory whatever the file's size.
//
// The file is refused as a whole (a *FileError, or ErrTooLarge) when it
// is larger than MaxImportBytes, is not UTF-8, is not CSV, lacks the
// target_url column, names a column twice or holds more than
// MaxImportRows rows. When one of these is found, the rest of the stream
// is read (and dropped) to report the first that applies in that order —
// too large, not UTF-8, then the others — as a check of the whole file
// would. Empty rows are skipped. Cells are read through Unsafe, so an
// export's formula-safe values come back as they were. Any other error of
// the stream (a body over its limit, a connection gone) is returned as is.
type Reader struct {
	src  *source
	csv  *csv.Reader
	cols columns
	opts ImportOptions
	line int   // the number of the last row read (the header is 1)
	rows int   // data rows returned
	err  error // the error that ended the file, returned again
}

// NewReader reads the header of the import file r. Every byte read from
// r is also written to copyTo when it is not nil (the upload keeps the
// file as it checks it); a failed write ends the reading with its error.
func NewReader(r io.Reader, copyTo io.Writer, opts ImportOptions) (*Reader, error) {
	src := &source{r: r, copy: copyTo}
	br := bufio.NewReader(src)
	if bom, err := br.Peek(3); err == nil && string(bom) == "\xef\xbb\xbf" { // a spreadsheet's BOM
		_, _ = br.Discard(3)
	} else if err != nil && !errors.Is(err, io.EOF) {
		return nil, (&Reader{src: src}).fail(err)
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	rd := &Reader{src: src, csv: cr, opts: opts, line: 1}
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, rd.fail(&FileError{"the file is empty; it needs a header row with at least a target_url column"})
	}
	if err != nil {
		return nil, rd.fail(err)
	}
	if rd.cols, err = columnsOf(header); err != nil {
		return nil, rd.fail(err)
	}
	return rd, nil
}

// Next returns the next data row, io.EOF after the last one, or the error
// that refuses the file (then again on every call).
func (r *Reader) Next() (Row, error) {
	if r.err != nil {
		return Row{}, r.err
	}
	for {
		rec, err := r.csv.Read()
		r.line++
		if errors.Is(err, io.EOF) {
			if r.src.bad { // an incomplete sequence at the very end
				r.err = r.fail(errNotUTF8)
				return Row{}, r.err
			}
			r.err = io.EOF
			return Row{}, io.EOF
		}
		if err != nil {
			r.err = r.fail(err)
			return Row{}, r.err
		}
		if blank(rec) {
			continue
		}
		if r.rows == MaxImportRows {
			r.err = r.fail(&FileError{fmt.Sprintf("the file has more than %d rows; split it into several files", MaxImportRows)})
			return Row{}, r.err
		}
		r.rows++
		return parseRow(r.line, r.cols, rec, r.opts), nil
	}
}

// Bytes is how many bytes of the file were read: its size, once Next
// returned io.EOF.
func (r *Reader) Bytes() int64 { return r.src.n }

// errNotUTF8 refuses a file whose bytes are not UTF-8.
var errNotUTF8 = &FileError{"the file is not UTF-8 text; save it from your spreadsheet as “CSV UTF-8”"}

// fail turns what stopped the reading into the file's refusal: the
// stream's own errors as they are; a refusal of the file only once the
// rest of the stream has been read, since being too large, then not being
// UTF-8, come before any other reason.
func (r *Reader) fail(err error) error {
	var (
		pe *csv.ParseError
		fe *FileError
	)
	switch {
	case errors.Is(err, ErrTooLarge):
		return ErrTooLarge
	case errors.As(err, &fe):
	case errors.As(err, &pe):
		fe = csvError(err).(*FileError)
	default:
		return err // the stream's: a body over its limit, a connection or database gone
	}
	if err := r.src.drain(); err != nil {
		return err
	}
	if r.src.bad {
		return errNotUTF8
	}
	return fe
}

// source counts the bytes read, refuses more than MaxImportBytes, checks
// that they are UTF-8 as they pass (a sequence cut between two reads is
// checked once whole), and copies them when asked.
type source struct {
	r    io.Reader
	copy io.Writer
	n    int64
	tail [utf8.UTFMax]byte // an incomplete sequence at the end of the last read
	nt   int
	bad  bool
}

func (s *source) Read(p []byte) (int, error) {
	if s.n > MaxImportBytes {
		return 0, ErrTooLarge
	}
	if s.bad {
		return 0, errNotUTF8
	}
	n, err := s.r.Read(p)
	s.n += int64(n)
	if s.n > MaxImportBytes {
		return 0, ErrTooLarge
	}
	s.check(p[:n])
	if errors.Is(err, io.EOF) && s.nt > 0 {
		s.bad = true
	}
	if s.copy != nil && n > 0 {
		if _, werr := s.copy.Write(p[:n]); werr != nil {
			return 0, werr
		}
	}
	if s.bad {
		return 0, errNotUTF8
	}
	return n, err
}

// drain reads the rest of the stream, counting and checking it, copying
// nothing: what a refusal needs to know.
func (s *source) drain() error {
	if s.n > MaxImportBytes {
		return ErrTooLarge
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := s.r.Read(buf)
		s.n += int64(n)
		if s.n > MaxImportBytes {
			return ErrTooLarge
		}
		s.check(buf[:n])
		if errors.Is(err, io.EOF) {
			if s.nt > 0 {
				s.bad = true
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// check validates b, the bytes after those already checked.
func (s *source) check(b []byte) {
	if s.bad || len(b) == 0 {
		return
	}
	for s.nt > 0 && len(b) > 0 { // complete the sequence the last read cut
		s.tail[s.nt] = b[0]
		s.nt++
		b = b[1:]
		if utf8.FullRune(s.tail[:s.nt]) {
			if !utf8.Valid(s.tail[:s.nt]) {
				s.bad = true
				return
			}
			s.nt = 0
		}
	}
	if len(b) == 0 {
		return
	}
	// Keep back a last sequence that is not whole yet.
	cut := len(b)
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				cut = i
			}
			break
		}
	}
	if !utf8.Valid(b[:cut]) {
		s.bad = true
		return
	}
	s.nt = copy(s.tail[:], b[cut:])
}
