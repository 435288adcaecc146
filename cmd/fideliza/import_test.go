package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/document"
)

// TestImportCustomersFromTheCLI: `import customers` loads the valid rows of
// a file and writes the refused ones to the error report; a progress file
// left by an interrupted run makes a plain rerun refuse to start, a resumed
// run continue after its line (appending to the report), and a progress
// file of another version of the file be refused.
func TestImportCustomersFromTheCLI(t *testing.T) {
	t.Parallel()
	withCLITenant(t, "Mercado Importação", func(t *testing.T, u, tid string, logs *syncBuffer) {
		dir := t.TempDir()
		file := filepath.Join(dir, "clientes.csv")
		var b strings.Builder
		b.WriteString("cpf,name,email,marketing_sms\n")
		for i := range 10 {
			fmt.Fprintf(&b, "%s,Cliente %d,cliente%d@example.com,sim\n", document.CPFOf(400_000_000+i), i, i)
		}
		b.WriteString("00000000000,Zero,zero@example.com,\n")               // line 12
		b.WriteString(document.CPFOf(400_000_100) + ",Sem Email,,talvez\n") // line 13
		require.NoError(t, os.WriteFile(file, []byte(b.String()), 0o600))
		run := func(args ...string) (map[string]any, error) {
			var out strings.Builder
			cmd := newRootCommand(&out, io.Discard)
			cmd.SetArgs(append([]string{"--database-url", u, "--json", "import", "customers", "--tenant", tid, "--file", file}, args...))
			if err := cmd.ExecuteContext(context.Background()); err != nil {
				return nil, err
			}
			var v map[string]any
			require.NoError(t, json.Unmarshal([]byte(out.String()), &v))
			return v, nil
		}
		counts := func(v map[string]any) [4]float64 {
			return [4]float64{v["rows"].(float64), v["created"].(float64), v["updated"].(float64), v["refused"].(float64)}
		}
		report := file + ".errors.csv"

		dry, err := run("--dry-run")
		require.NoError(t, err)
		require.Equal(t, [4]float64{12, 10, 0, 2}, counts(dry))
		require.Equal(t, true, dry["dry_run"])

		out, err := run()
		require.NoError(t, err)
		require.Equal(t, [4]float64{12, 10, 0, 2}, counts(out))
		require.Equal(t, report, out["errors_file"])
		raw, err := os.ReadFile(report)
		require.NoError(t, err)
		require.Equal(t, "line,field,message\n"+
			"12,cpf,is not a valid CPF (check digits do not match)\n"+
			"13,email,is required\n"+
			"13,marketing_sms,must be true or false\n", string(raw))
		require.NoFileExists(t, file+".progress", "a finished import leaves no progress file")

		// An interrupted run had committed up to line 6.
		st, err := os.Stat(file)
		require.NoError(t, err)
		progress := func(size int64) {
			raw, err := json.Marshal(importProgress{Size: size, ModTime: st.ModTime().UTC(), Line: 6})
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(file+".progress", raw, 0o600))
		}
		progress(st.Size())
		_, err = run()
		require.ErrorContains(t, err, "rerun with --resume")
		out, err = run("--resume")
		require.NoError(t, err)
		require.Equal(t, [4]float64{7, 0, 5, 2}, counts(out), "lines 7–13 only: five known CPFs updated, two refused")
		raw, err = os.ReadFile(report)
		require.NoError(t, err)
		require.Equal(t, 7, strings.Count(string(raw), "\n"), "the resumed run appends its three problems to the report")
		require.NoFileExists(t, file+".progress")

		progress(st.Size() + 1)
		_, err = run("--resume")
		require.ErrorContains(t, err, "belongs to another version")
	})
}
