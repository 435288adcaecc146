// Package safecsv is the one CSV writer of every file the service writes
// (exports, import problem reports): a cell a spreadsheet would read as a
// formula (OWASP's "CSV injection") is written as text.
package safecsv

import (
	"encoding/csv"
	"io"
	"strings"
)

// formulaStarts are the first characters that make a spreadsheet read a
// cell as a formula (OWASP: = + - @, tab and carriage return).
const formulaStarts = "=+-@\t\r"

// Cell is s as it is written: prefixed with a single quote when it begins
// with one of formulaStarts, so that a spreadsheet shows it as text. Every
// cell is neutralized, numbers too: no file the service writes holds a
// negative number, and one that did would be read by people, not parsed.
func Cell(s string) string {
	if s != "" && strings.IndexByte(formulaStarts, s[0]) >= 0 {
		return "'" + s
	}
	return s
}

// Writer writes CSV records with every cell neutralized by Cell.
type Writer struct {
	w    *csv.Writer
	cell []string
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: csv.NewWriter(w)} }

// Write writes one record.
func (w *Writer) Write(record []string) error {
	w.cell = w.cell[:0]
	for _, s := range record {
		w.cell = append(w.cell, Cell(s))
	}
	return w.w.Write(w.cell)
}

// Flush writes any buffered data to the underlying io.Writer.
func (w *Writer) Flush() { w.w.Flush() }

// Error reports any error of a previous Write or Flush.
func (w *Writer) Error() error { return w.w.Error() }
