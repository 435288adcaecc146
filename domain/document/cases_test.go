package document_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/document/documenttest"
)

// TestCaseTable parses every case of the table: valid documents bare, in
// their canonical mask or with Unicode spaces around; separators anywhere
// else, spaces inside, wrong lengths and check digits refused, each with
// its own error.
func TestCaseTable(t *testing.T) {
	t.Parallel()
	cases := documenttest.LoadCases(t, "testdata/cases.tsv")
	require.GreaterOrEqual(t, len(cases), 300)
	for _, c := range cases {
		got, err := document.Parse(c.Kind, c.Input)
		if c.Valid() {
			require.NoError(t, err, "%s %q", c.Kind, c.Input)
			require.Equal(t, c.Want, got, "%s %q", c.Kind, c.Input)
			continue
		}
		require.ErrorIs(t, err, documenttest.CaseErrors[c.Want], "%s %q", c.Kind, c.Input)
	}
}
