package customers_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// jsonlCustomer is customer i as a JSON line of exactly size bytes (line
// break not counted), padded with white space inside the object.
func jsonlCustomer(i, size int) string {
	s := fmt.Sprintf(`{"name":"Cliente %d","email":"cliente%d@example.com","cpf":"%s"`, i, i, document.CPFOf(700_000_000+i))
	return s + strings.Repeat(" ", size-len(s)-1) + "}"
}

// csvCustomer is customer i as a CSV line (cpf,name,email) of exactly size
// bytes, its name padded with spaces (trimmed when read).
func csvCustomer(i, size int) string {
	s := fmt.Sprintf(`%s,Cliente %d,cliente%d@example.com`, document.CPFOf(700_000_000+i), i, i)
	cpf, rest, _ := strings.Cut(s, ",")
	return cpf + "," + strings.Repeat(" ", size-len(s)) + rest
}

// rowLines reads a file's rows: the lines read as customers, and those
// refused with their error.
func rowLines(t *testing.T, r io.Reader, format string) (read []int, refused map[int]string) {
	t.Helper()
	rows, err := customers.CustomerFileRows(r, format, 0)
	require.NoError(t, err)
	refused = map[int]string{}
	for row, err := range rows {
		require.NoError(t, err)
		if e, ok := apperr.As(row.Err); ok {
			refused[row.Line] = e.Details[0].Message
		} else {
			read = append(read, row.Line)
		}
	}
	return read, refused
}

// TestLongLines: a line up to MaxImportLine bytes (line break not counted)
// is a row; a longer one is refused and the lines after it are read, in
// both formats.
func TestLongLines(t *testing.T) {
	t.Parallel()
	const limit = customers.MaxImportLine
	tooLong := "the line is longer than 64 KiB"
	for _, format := range []string{"jsonl", "csv"} {
		line, header := jsonlCustomer, ""
		if format == "csv" {
			line, header = csvCustomer, "cpf,name,email\n"
		}
		first := 1 + strings.Count(header, "\n")
		for _, size := range []int{limit - 1, limit, limit + 1, 1 << 20} {
			t.Run(fmt.Sprintf("%s %d bytes", format, size), func(t *testing.T) {
				for _, eol := range []string{"\n", "\r\n"} {
					file := header + line(1, 200) + eol + line(2, size) + eol + line(3, 200) + eol + line(4, 200) + eol + line(5, 200)
					read, refused := rowLines(t, strings.NewReader(file), format)
					if size <= limit {
						require.Equal(t, []int{first, first + 1, first + 2, first + 3, first + 4}, read)
						require.Empty(t, refused)
						continue
					}
					require.Equal(t, []int{first, first + 2, first + 3, first + 4}, read)
					require.Equal(t, map[int]string{first + 1: tooLong}, refused)
				}
			})
		}
	}

	t.Run("a quoted CSV cell across lines", func(t *testing.T) {
		file := "cpf,name,email\n" + csvCustomer(1, 100) + "\n" +
			document.CPFOf(700_000_002) + `,"Ana` + "\n" + `Maria ""Souza""",ana@example.com` + "\n" + // lines 3-4
			document.CPFOf(700_000_003) + `,"` + strings.Repeat("x\n", limit) + `",b@example.com` + "\n" + // lines 5 to 5+limit
			csvCustomer(4, 100) + "\n" +
			`52998224725,Bare"quote,c@example.com` + "\n" +
			csvCustomer(5, 100)
		read, refused := rowLines(t, strings.NewReader(file), "csv")
		require.Equal(t, []int{2, 3, 6 + limit, 8 + limit}, read)
		require.Len(t, refused, 2)
		require.Equal(t, tooLong, refused[5])
		require.Contains(t, refused[7+limit], "the line is not CSV")
	})

	t.Run("a line near the upload limit", func(t *testing.T) {
		file := io.MultiReader(strings.NewReader(jsonlCustomer(1, 200)+"\n"), io.LimitReader(repeat('x'), customers.MaxImportBytes-1000),
			strings.NewReader("\n"+jsonlCustomer(3, 200)+"\n"+jsonlCustomer(4, 200)+"\n"+jsonlCustomer(5, 200)+"\n"))
		read, refused := rowLines(t, file, "jsonl")
		require.Equal(t, []int{1, 3, 4, 5}, read)
		require.Equal(t, map[int]string{2: tooLong}, refused)
	})
}

// repeat is an endless stream of one byte.
type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestImportOfAFileThatFails: a file that cannot be read to its end fails
// the import, which never reports success having read part of it.
func TestImportOfAFileThatFails(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		for _, format := range []string{"jsonl", "csv"} {
			t.Run(format, func(t *testing.T) {
				im := newImporter(t, db)
				var file bytes.Buffer
				if format == "csv" {
					file.WriteString("cpf,name,email\n")
				}
				for i := range 3 {
					if format == "csv" {
						file.WriteString(csvCustomer(i, 100) + "\n")
					} else {
						file.WriteString(jsonlCustomer(i, 100) + "\n")
					}
				}
				rows, err := customers.CustomerFileRows(io.MultiReader(&file, iotest.ErrReader(errors.New("disk failure"))), format, 0)
				require.NoError(t, err)
				_, err = im.a.Customers.ImportCustomers(im.ctx, rows, customers.ImportOptions{})
				require.ErrorContains(t, err, "disk failure")
			})
		}
	})
}
