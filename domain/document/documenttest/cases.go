// Package documenttest reads the table of documents as clients send them
// (domain/document/testdata/cases.tsv) for the tests of every interface
// that takes one.
package documenttest

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/document"
)

// Case is one line of testdata/cases.tsv: a document as a client may send
// it, its kind, and what parsing it must give.
type Case struct {
	Kind  document.Type
	Input string
	Want  string // the document's characters, or an error name of CaseErrors
}

// CaseErrors names the errors of the case table.
var CaseErrors = map[string]error{
	"length": document.ErrLength, "characters": document.ErrCharacters, "check_digits": document.ErrCheckDigits,
	"separators": document.ErrSeparators, "spaces": document.ErrSpaces,
}

// Valid says whether the case is a document that must be accepted.
func (c Case) Valid() bool { return CaseErrors[c.Want] == nil }

// Path is the case table, relative to the module's root.
const Path = "domain/document/testdata/cases.tsv"

// LoadCases reads the case table at path (relative to the calling test).
func LoadCases(tb testing.TB, path string) []Case {
	tb.Helper()
	f, err := os.Open(path)
	require.NoError(tb, err)
	defer f.Close()
	var cases []Case
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		require.Len(tb, cols, 3, line)
		c := Case{Kind: document.Type(cols[0]), Want: cols[2]}
		require.NoError(tb, json.Unmarshal([]byte(cols[1]), &c.Input), line)
		cases = append(cases, c)
	}
	require.NoError(tb, sc.Err())
	return cases
}
