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

// TestCLIImportsReadPastLongLines: a line of 70 KB (over the 64 KiB a line
// may hold) in a file given to `import customers` or `catalog import` is
// a refused row in the error report, and the lines after it load. The
// customer import used to stop there, exit 0 and report two rows.
func TestCLIImportsReadPastLongLines(t *testing.T) {
	t.Parallel()
	withCLITenant(t, "Mercado Linhas Longas", func(t *testing.T, u, tid string, _ *syncBuffer) {
		dir := t.TempDir()
		run := func(args ...string) map[string]any {
			var out strings.Builder
			cmd := newRootCommand(&out, io.Discard)
			cmd.SetArgs(append([]string{"--database-url", u, "--json"}, args...))
			require.NoError(t, cmd.ExecuteContext(context.Background()))
			var v map[string]any
			require.NoError(t, json.Unmarshal([]byte(out.String()), &v))
			return v
		}
		counts := func(v map[string]any) []any { return []any{v["rows"], v["created"], v["refused"]} }
		long := strings.Repeat(" ", 70_000)

		var customers strings.Builder
		for i := range 5 {
			pad := ""
			if i == 1 {
				pad = long
			}
			fmt.Fprintf(&customers, `{"name":"Cliente %d","email":"linha%d@example.com","cpf":"%s"%s}`+"\n", i, i, document.CPFOf(500_000_000+i), pad)
		}
		file := filepath.Join(dir, "clientes.jsonl")
		require.NoError(t, os.WriteFile(file, []byte(customers.String()), 0o600))
		got := run("import", "customers", "--tenant", tid, "--file", file)
		require.Equal(t, []any{5.0, 4.0, 1.0}, counts(got), "%v", got)
		report, err := os.ReadFile(file + ".errors.csv")
		require.NoError(t, err)
		require.Equal(t, "line,field,message\n2,,the line is longer than 64 KiB\n", string(report))

		products := "gtin,name\n7891000100103,Café\n7891000100110,Detergente" + long + "\n7891000053508,Leite\n"
		file = filepath.Join(dir, "produtos.csv")
		require.NoError(t, os.WriteFile(file, []byte(products), 0o600))
		got = run("catalog", "import", "--tenant", tid, "--file", file)
		require.Equal(t, []any{3.0, 2.0, 1.0}, counts(got), "%v", got)
		report, err = os.ReadFile(file + ".errors.csv")
		require.NoError(t, err)
		require.Equal(t, "line,field,message\n3,,the line is longer than 64 KiB\n", string(report))
	})
}
