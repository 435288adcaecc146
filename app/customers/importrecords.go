package customers

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"

	"github.com/fideliza/fideliza/domain/apperr"
)

// MaxImportLine bounds one line of an import file (one CSV record, the line
// breaks of its quoted cells included), in bytes, without its line break. A
// longer line is refused as a row while the lines after it load; it is
// skipped to its end, never held in memory.
const MaxImportLine = 64 << 10

// importRecord is a line of an import file, or, in CSV, a record.
type importRecord struct {
	line    int    // the line it starts on, from 1
	data    []byte // its bytes, line break included; nil when too long
	tooLong bool
}

// blank says whether the record holds nothing but its line break (for
// JSON Lines, nothing but white space).
func (r importRecord) blank() bool { return !r.tooLong && len(bytes.TrimSpace(r.data)) == 0 }

// recordReader splits an import file into records: its lines or, with
// csv, its CSV records, where a line break in a quoted cell does not end
// the record. It holds at most one record of MaxImportLine in memory.
type recordReader struct {
	br    *bufio.Reader
	csv   bool
	lines int // the line breaks read so far
	buf   []byte
}

func newRecordReader(r io.Reader, csv bool) *recordReader {
	// Room for a whole line at the bound and its \r\n, so that it comes
	// in one slice.
	return &recordReader{br: bufio.NewReaderSize(r, MaxImportLine+2), csv: csv}
}

// next reads the next record; io.EOF after the last. Any other error is
// the file's, which could not be read to its end.
func (r *recordReader) next() (importRecord, error) {
	rec := importRecord{line: r.lines + 1}
	r.buf = r.buf[:0]
	var quotes csvQuotes
	size, end := 0, 0 // the record's bytes, and those of its line break
	for {
		chunk, err := r.br.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) && !errors.Is(err, io.EOF) {
			return rec, err
		}
		size += len(chunk)
		if !rec.tooLong {
			if size > MaxImportLine+2 {
				rec.tooLong, r.buf = true, r.buf[:0]
			} else {
				r.buf = append(r.buf, chunk...)
			}
		}
		if r.csv {
			quotes.read(chunk)
		}
		ended := bytes.HasSuffix(chunk, []byte("\n"))
		if ended {
			r.lines++
			end = 1
			if bytes.HasSuffix(chunk, []byte("\r\n")) {
				end = 2
			}
		}
		if errors.Is(err, io.EOF) {
			if size == 0 {
				return rec, io.EOF
			}
			if len(chunk) > 0 && !ended {
				r.lines++ // a last line without a line break
				end = 0
			}
			break
		}
		if ended && !quotes.open {
			break
		}
	}
	if size-end > MaxImportLine {
		rec.tooLong = true
	}
	if !rec.tooLong {
		rec.data = r.buf
	}
	return rec, nil
}

// csvQuotes follows the quoting of a CSV record as encoding/csv reads it: a
// quote opens a quoted cell only as the cell's first character; in one, a
// doubled quote is a quote and a single one closes it.
type csvQuotes struct {
	open    bool // in a quoted cell
	closing bool // just after a quote in a quoted cell
	inCell  bool // past the first character of a cell, out of quotes
}

func (q *csvQuotes) read(chunk []byte) {
	for _, c := range chunk {
		switch {
		case q.open && q.closing:
			q.closing = false
			if c == '"' {
				continue // a doubled quote: still in the cell
			}
			q.open = false
			q.inCell = c != ',' && c != '\n'
		case q.open:
			q.closing = c == '"'
		case c == ',' || c == '\n':
			q.inCell = false
		case c == '"' && !q.inCell:
			q.open = true
		default:
			q.inCell = true
		}
	}
}

// csvRecords parses records one at a time with one csv.Reader, fed each
// record alone: what it leaves of a record it could not parse never runs
// into the next.
type csvRecords struct {
	feed bytes.Reader
	br   *bufio.Reader
	cr   *csv.Reader
}

func newCSVRecords() *csvRecords {
	c := &csvRecords{}
	// csv.NewReader keeps a *bufio.Reader of its default size as it is,
	// so that resetting it drops what the reader left of a record.
	c.br = bufio.NewReaderSize(&c.feed, 4096)
	c.cr = csv.NewReader(c.br)
	c.cr.FieldsPerRecord = -1
	c.cr.ReuseRecord = true
	return c
}

// errCSVRecord is a record encoding/csv read apart from where its quoting
// ends it.
var errCSVRecord = errors.New("the quoted cells of the line do not close")

// parse reads the cells of one record's bytes.
func (c *csvRecords) parse(data []byte) ([]string, error) {
	c.feed.Reset(data)
	c.br.Reset(&c.feed)
	cells, err := c.cr.Read()
	if pe := (*csv.ParseError)(nil); errors.As(err, &pe) {
		return nil, pe.Err
	}
	if err == nil && (c.br.Buffered() > 0 || c.feed.Len() > 0) {
		return nil, errCSVRecord
	}
	return cells, err
}

// CSVRow is a record of a CSV file: its line, and its cells or why it
// could not be read (too long, or not CSV).
type CSVRow struct {
	Line  int
	Cells []string // valid until the next row
	Err   error
}

// ReadCSVFile reads a CSV file's header and returns its rows after the
// line after (a resumed import), blank lines left out. The rows end with an
// error when the file cannot be read to its end; a line that cannot be
// read as CSV is a row with its Err, and the rows after it follow.
func ReadCSVFile(r io.Reader, after int) ([]string, iter.Seq2[CSVRow, error], error) {
	records, cells := newRecordReader(r, true), newCSVRecords()
	head, err := records.nextFilled()
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("reading the CSV header: %w", err)
	case head.tooLong:
		return nil, nil, fmt.Errorf("the CSV header is longer than %d KiB", MaxImportLine>>10)
	}
	header, err := cells.parse(head.data)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the CSV header: %w", err)
	}
	header = slices.Clone(header)
	return header, func(yield func(CSVRow, error) bool) {
		for {
			rec, err := records.nextFilled()
			switch {
			case errors.Is(err, io.EOF):
				return
			case err != nil:
				yield(CSVRow{}, records.failed(err))
				return
			}
			if rec.line <= after {
				continue
			}
			row := CSVRow{Line: rec.line, Err: rec.err()}
			if row.Err == nil {
				if row.Cells, err = cells.parse(rec.data); err != nil {
					row.Err = apperr.Invalid("", "the line is not CSV: %v", err)
				}
			}
			if !yield(row, nil) {
				return
			}
		}
	}, nil
}

// nextFilled is next, past blank records.
func (r *recordReader) nextFilled() (importRecord, error) {
	for {
		rec, err := r.next()
		if err != nil || !rec.blank() {
			return rec, err
		}
	}
}

// failed is the error of a file that could not be read past its lines so far.
func (r *recordReader) failed(err error) error {
	return fmt.Errorf("the file could not be read after its line %d: %w", r.lines, err)
}

// err is why the record cannot be read as a row, or nil.
func (r importRecord) err() error {
	if r.tooLong {
		return apperr.Invalid("", "the line is longer than %d KiB", MaxImportLine>>10)
	}
	return nil
}
