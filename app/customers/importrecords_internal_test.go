package customers

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRecordReaderMemory: a line near the upload limit is skipped holding
// no more of it than a line at the bound.
func TestRecordReaderMemory(t *testing.T) {
	for _, csv := range []bool{false, true} {
		huge := io.LimitReader(xs{}, MaxImportBytes-1000)
		r := newRecordReader(io.MultiReader(strings.NewReader("a\n"), huge, strings.NewReader("\nb\n")), csv)
		var got []importRecord
		for {
			rec, err := r.next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			got = append(got, importRecord{line: rec.line, data: append([]byte(nil), rec.data...), tooLong: rec.tooLong})
			require.LessOrEqual(t, cap(r.buf), 2*(MaxImportLine+2), "bytes held of a record")
		}
		require.Equal(t, []importRecord{{1, []byte("a\n"), false}, {2, nil, true}, {3, []byte("b\n"), false}}, got)
	}
}

// xs is an endless stream of x.
type xs struct{}

func (xs) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}
