package safecsv_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/safecsv"
)

func TestWriterNeutralizesFormulas(t *testing.T) {
	cells := []struct{ in, out string }{
		{`=HYPERLINK("http://evil.invalid","x")`, `"'=HYPERLINK(""http://evil.invalid"",""x"")"`},
		{"+1", "'+1"},
		{"-1.00", "'-1.00"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"},
		{"\rx", "\"'\rx\""},
		{"", ""},
		{"Ana", "Ana"},
		{"1", "1"},
		{"a=b", "a=b"},
		{" =1", `" =1"`}, // csv quotes a leading space
		{"'=1", "'=1"},
	}
	for _, c := range cells {
		var b strings.Builder
		w := safecsv.NewWriter(&b)
		require.NoError(t, w.Write([]string{c.in, "x"}))
		w.Flush()
		require.NoError(t, w.Error())
		require.Equal(t, c.out+",x\n", b.String(), "%q", c.in)
	}
}

// csvWriter is a writer of encoding/csv made in code.
var csvWriter = regexp.MustCompile(`(^|[^\w])csv\.NewWriter\(`)

// TestEveryCSVWriterIsSafe: no code of the service writes CSV but through
// this package.
func TestEveryCSVWriterIsSafe(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		if filepath.Dir(path) != filepath.Join(root, "safecsv") {
			require.False(t, csvWriter.Match(src), "%s writes CSV without safecsv", path)
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, checked, 100, "the sources were walked")
}
