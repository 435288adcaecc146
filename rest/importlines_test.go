package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// importLine is customer n as a line of exactly size bytes (line break not
// counted) of format, padded with white space that reading drops.
func importLine(format string, n, size int) string {
	cpf, name, email := document.CPFOf(600_000_000+n), fmt.Sprintf("Cliente %d", n), fmt.Sprintf("cliente%d@example.com", n)
	if format == "csv" {
		s := cpf + "," + name + "," + email
		return cpf + "," + strings.Repeat(" ", size-len(s)) + name + "," + email
	}
	s := fmt.Sprintf(`{"name":%q,"email":%q,"cpf":%q`, name, email, cpf)
	return s + strings.Repeat(" ", size-len(s)-1) + "}"
}

// maxImportLine is the documented bound of a line of an import file.
const maxImportLine = 64 << 10

// repeatByte is an endless stream of one byte.
type repeatByte byte

func (r repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestCustomerImportLongLines: an import sent to /v1 whose second line is
// longer than 64 KiB (up to nearly the 256 MiB an upload may hold) refuses
// that line and loads the lines after it; lines up to 64 KiB load. A JSON
// Lines import used to stop at such a line and report success.
func TestCustomerImportLongLines(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newFixture(t, db)
		ctx := viewer.TenantContext(context.Background(), f.tenantID)
		scopes := []string{"customers:read", "customers:write"}
		token := f.token(t, f.client(t, apiclient.KindOauth, scopes...), strings.Join(scopes, " "))
		media := map[string]string{"csv": "text/csv", "jsonl": "application/x-ndjson"}
		next := 0 // customers are numbered across the imports, for new ones each time
		load := func(t *testing.T, format string, file io.Reader) (imp importAnswer, problems string) {
			t.Helper()
			req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/v1/customers/imports", file)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", media[format])
			res := do(t, http.DefaultClient, req)
			require.Equal(t, http.StatusAccepted, res.status, "%s", res.body)
			require.NoError(t, json.Unmarshal(res.body, &imp))
			require.NoError(t, f.app.Customers.RunCustomerImport(ctx, jobs.ImportCustomers{TenantID: f.tenantID, ImportID: imp.ID}))
			res = do(t, http.DefaultClient, bearerGet(t, f.srv.URL+"/v1/customers/imports/"+imp.ID, token))
			require.Equal(t, http.StatusOK, res.status, "%s", res.body)
			require.NoError(t, json.Unmarshal(res.body, &imp))
			res = do(t, http.DefaultClient, bearerGet(t, f.srv.URL+imp.ProblemsURL, token))
			require.Equal(t, http.StatusOK, res.status, "%s", res.body)
			return imp, string(res.body)
		}
		// fiveLines is a file of five customers, the second's line of size
		// bytes, after a header in CSV; second is the big line's number.
		fiveLines := func(format string, second io.Reader) (file io.Reader, line int) {
			var head, tail strings.Builder
			if format == "csv" {
				head.WriteString("cpf,name,email\n")
			}
			head.WriteString(importLine(format, next, 200) + "\n")
			for i := range 3 {
				tail.WriteString("\n" + importLine(format, next+2+i, 200))
			}
			next += 5
			return io.MultiReader(strings.NewReader(head.String()), second, strings.NewReader(tail.String()+"\n")), strings.Count(head.String(), "\n") + 1
		}

		for _, format := range []string{"jsonl", "csv"} {
			for _, size := range []int{maxImportLine - 1, maxImportLine, maxImportLine + 1, 1 << 20} {
				t.Run(fmt.Sprintf("%s line of %d bytes", format, size), func(t *testing.T) {
					file, line := fiveLines(format, strings.NewReader(importLine(format, next+1, size)))
					imp, problems := load(t, format, file)
					require.Equal(t, "succeeded", imp.Status)
					if size <= maxImportLine {
						require.Equal(t, []int{5, 5, 0}, []int{imp.Rows, imp.Created, imp.Refused})
						require.Equal(t, "line,field,message\n", problems)
						return
					}
					require.Equal(t, []int{5, 4, 1}, []int{imp.Rows, imp.Created, imp.Refused})
					require.Equal(t, fmt.Sprintf("line,field,message\n%d,,the line is longer than 64 KiB\n", line), problems)
				})
			}
		}

		t.Run("a line near the upload limit", func(t *testing.T) {
			file, line := fiveLines("jsonl", io.LimitReader(repeatByte('x'), customers.MaxImportBytes-4096))
			imp, problems := load(t, "jsonl", file)
			require.Equal(t, "succeeded", imp.Status)
			require.Greater(t, imp.Bytes, int64(customers.MaxImportBytes-4096))
			require.Equal(t, []int{5, 4, 1}, []int{imp.Rows, imp.Created, imp.Refused})
			require.Equal(t, fmt.Sprintf("line,field,message\n%d,,the line is longer than 64 KiB\n", line), problems)
		})
	})
}
