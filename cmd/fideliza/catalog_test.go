package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage"
)

// TestCatalogImportFromTheCLI: `catalog import` loads a CSV of products,
// reports the refused rows by line, updates known products on a second run
// and shows its progress on stderr.
func TestCatalogImportFromTheCLI(t *testing.T) {
	t.Parallel()
	withCLITenant(t, "Mercado Catálogo", func(t *testing.T, u, tid string, _ *syncBuffer) {
		dir := t.TempDir()
		file := filepath.Join(dir, "products.csv")
		require.NoError(t, os.WriteFile(file, []byte("\ufeffGTIN,sku,name,category,brand\n"+
			"7891000100103,CAFE-500,Café 500 g,Mercearia>Café,Pilão\n"+
			"7891000100110,,Detergente 500 ml, Limpeza > Louça ,Ypê\n"+
			"\n"+
			"123,,GTIN curto,,\n"+ // line 5
			",SUCO-1,,Bebidas,\n"), 0o600)) // line 6
		run := func() (map[string]any, string) {
			var out, errs strings.Builder
			cmd := newRootCommand(&out, &errs)
			cmd.SetArgs([]string{"--database-url", u, "--json", "catalog", "import", "--tenant", tid, "--file", file})
			require.NoError(t, cmd.ExecuteContext(context.Background()))
			var v map[string]any
			require.NoError(t, json.Unmarshal([]byte(out.String()), &v))
			return v, errs.String()
		}
		got, progress := run()
		require.Equal(t, []any{4.0, 2.0, 0.0, 2.0}, []any{got["rows"], got["created"], got["updated"], got["refused"]}, "%v", got)
		require.Contains(t, progress, "5/5 rows") // lines after the header, the blank one too
		report, err := os.ReadFile(file + ".errors.csv")
		require.NoError(t, err)
		require.Equal(t, "line,field,message\n5,gtin,must be 8 to 14 digits\n6,name,is required\n", string(report))

		got, _ = run()
		require.Equal(t, []any{0.0, 2.0, 2.0}, []any{got["created"], got["updated"], got["refused"]}, "%v", got)

		db, err := storage.Open(context.Background(), u)
		require.NoError(t, err)
		defer db.Close()
		require.Equal(t, []string{"Limpeza > Louça|Ypê", "Mercearia > Café|Pilão"},
			queryStrings(t, db.SQL, "SELECT category || '|' || brand FROM products ORDER BY category"))
	})
}
