package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/schema/sealed"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// importAnswer is an import as /v1 shows it.
type importAnswer struct {
	ID, Status, Format     string
	DryRun                 bool `json:"dry_run"`
	Bytes                  int64
	Rows, Created, Updated int
	Refused                int
	Error                  *string
	ProblemsURL            string  `json:"problems_url"`
	CreatedAt              string  `json:"created_at"`
	StartedAt              *string `json:"started_at"`
	FinishedAt             *string `json:"finished_at"`
}

// TestCustomerImportJob sends files to POST /v1/customers/imports, works
// the queued job as the worker does, and reads the outcome and the report.
func TestCustomerImportJob(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newFixture(t, db)
		ctx := viewer.TenantContext(context.Background(), f.tenantID)
		writer := f.token(t, f.client(t, apiclient.KindOauth, "customers:read", "customers:write"), "customers:read customers:write")
		reader := f.token(t, f.client(t, apiclient.KindOauth, "customers:read"), "customers:read")
		send := func(t *testing.T, token, contentType, query string, body []byte) response {
			t.Helper()
			req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/v1/customers/imports"+query, bytes.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+token)
			if contentType != "" {
				req.Header.Set("Content-Type", contentType)
			}
			return do(t, http.DefaultClient, req)
		}
		get := func(t *testing.T, path string) response {
			t.Helper()
			return do(t, http.DefaultClient, bearerGet(t, f.srv.URL+path, reader))
		}
		readImport := func(t *testing.T, id string) importAnswer {
			t.Helper()
			res := get(t, "/v1/customers/imports/"+id)
			require.Equal(t, http.StatusOK, res.status, "%s", res.body)
			var imp importAnswer
			require.NoError(t, json.Unmarshal(res.body, &imp))
			return imp
		}

		// An existing customer the file updates by CPF.
		_, err := f.app.Customers.CreateCustomer(ctx, customers.CustomerInput{Name: opt.Of("Antiga"), Email: opt.Of("antiga@example.com"), CPF: opt.Of(document.CPFOf(1))})
		require.NoError(t, err)
		var file strings.Builder
		file.WriteString("external_id,name,email,cpf\n")
		for i := 1; i <= 2500; i++ { // two batches
			fmt.Fprintf(&file, "CRM-%d,Cliente %d,cliente%d@example.com,%s\n", i, i, i, document.CPFOf(i))
		}
		file.WriteString("CRM-X,Sem CPF,sem.cpf@example.com,123\n")                    // line 2502: invalid CPF
		file.WriteString("CRM-Y,,sem.nome@example.com," + document.CPFOf(9999) + "\n") // line 2503: no name

		t.Run("a dry run writes nothing but the report", func(t *testing.T) {
			res := send(t, writer, "text/csv; charset=utf-8", "?dry_run=true", []byte(file.String()))
			require.Equal(t, http.StatusAccepted, res.status, "%s", res.body)
			var imp importAnswer
			require.NoError(t, json.Unmarshal(res.body, &imp))
			require.True(t, imp.DryRun)
			require.NoError(t, f.app.Customers.RunCustomerImport(ctx, jobs.ImportCustomers{TenantID: f.tenantID, ImportID: imp.ID}))
			imp = readImport(t, imp.ID)
			require.Equal(t, "succeeded", imp.Status)
			require.Equal(t, []int{2502, 2499, 1, 2}, []int{imp.Rows, imp.Created, imp.Updated, imp.Refused})
			n, err := f.app.DB.Ent.Customer.Query().Count(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n)
		})

		var id string
		t.Run("valid rows load, invalid ones are reported", func(t *testing.T) {
			res := send(t, writer, "text/csv", "", []byte(file.String()))
			require.Equal(t, http.StatusAccepted, res.status, "%s", res.body)
			var imp importAnswer
			require.NoError(t, json.Unmarshal(res.body, &imp))
			id = imp.ID
			require.Equal(t, "/v1/customers/imports/"+id, res.header.Get("Location"))
			require.Equal(t, "queued", imp.Status)
			require.Equal(t, "csv", imp.Format)
			require.EqualValues(t, file.Len(), imp.Bytes)
			require.Nil(t, imp.StartedAt)

			require.NoError(t, f.app.Customers.RunCustomerImport(ctx, jobs.ImportCustomers{TenantID: f.tenantID, ImportID: id}))
			imp = readImport(t, id)
			require.Equal(t, "succeeded", imp.Status)
			require.Equal(t, []int{2502, 2499, 1, 2}, []int{imp.Rows, imp.Created, imp.Updated, imp.Refused})
			require.NotNil(t, imp.FinishedAt)
			require.Nil(t, imp.Error)

			old, err := f.app.DB.Ent.Customer.Query().Where(customer.DocumentIndex(sealed.MustIndex(document.CPFOf(1)))).Only(ctx)
			require.NoError(t, err)
			require.Equal(t, "Cliente 1", old.Name, "updated by CPF")
			n, err := f.app.DB.Ent.Customer.Query().Count(ctx)
			require.NoError(t, err)
			require.Equal(t, 2500, n)
			chunks, err := f.app.DB.Ent.CustomerImportChunk.Query().Count(ctx)
			require.NoError(t, err)
			require.Zero(t, chunks, "the file is dropped once loaded")

			res = get(t, imp.ProblemsURL)
			require.Equal(t, http.StatusOK, res.status)
			require.Equal(t, "text/csv; charset=utf-8", res.header.Get("Content-Type"))
			require.Equal(t, "line,field,message\n2502,cpf,is not a valid CPF (wrong number of characters)\n2503,name,is required\n", string(res.body))
			require.NotContains(t, string(res.body), "sem.nome@example.com", "the report holds no value of a row")

			require.NoError(t, f.app.Customers.RunCustomerImport(ctx, jobs.ImportCustomers{TenantID: f.tenantID, ImportID: id}), "a job run again changes nothing")
			require.Equal(t, imp, readImport(t, id))
		})

		t.Run("GraphQL reads the same import", func(t *testing.T) {
			a := f.gql(t, reader, `query($id: ID!) { customerImport(id: $id) { status rows created updated refused problems(first: 1) { line field message } } }`,
				map[string]any{"id": id})
			require.Empty(t, a.Errors)
			require.JSONEq(t, `{"customerImport":{"status":"succeeded","rows":2502,"created":2499,"updated":1,"refused":2,
				"problems":[{"line":2502,"field":"cpf","message":"is not a valid CPF (wrong number of characters)"}]}}`, string(a.Data))
		})

		t.Run("a resumed job skips the committed lines", func(t *testing.T) {
			var jsonl strings.Builder
			for i := 3001; i <= 3010; i++ {
				fmt.Fprintf(&jsonl, `{"name":"JSON %d","email":"json%d@example.com","cpf":"%s"}`+"\n", i, i, document.CPFOf(i))
			}
			res := send(t, writer, "application/x-ndjson", "", []byte(jsonl.String()))
			require.Equal(t, http.StatusAccepted, res.status, "%s", res.body)
			var imp importAnswer
			require.NoError(t, json.Unmarshal(res.body, &imp))
			// As if a worker had committed the first four lines, then died.
			require.NoError(t, f.app.DB.Ent.CustomerImport.UpdateOneID(imp.ID).SetDoneLine(4).SetRows(4).SetCreated(4).Exec(ctx))
			require.NoError(t, f.app.Customers.RunCustomerImport(ctx, jobs.ImportCustomers{TenantID: f.tenantID, ImportID: imp.ID}))
			imp = readImport(t, imp.ID)
			require.Equal(t, []int{10, 10, 0, 0}, []int{imp.Rows, imp.Created, imp.Updated, imp.Refused})
			n, err := f.app.DB.Ent.Customer.Query().Where(customer.NameHasPrefix("JSON ")).Count(ctx)
			require.NoError(t, err)
			require.Equal(t, 6, n, "lines 1 to 4 were not read again")
		})

		t.Run("a file it cannot read fails the import", func(t *testing.T) {
			res := send(t, writer, "text/csv", "", []byte("nome,correio\nAna,ana@example.com\n"))
			require.Equal(t, http.StatusAccepted, res.status, "%s", res.body)
			var imp importAnswer
			require.NoError(t, json.Unmarshal(res.body, &imp))
			require.NoError(t, f.app.Customers.RunCustomerImport(ctx, jobs.ImportCustomers{TenantID: f.tenantID, ImportID: imp.ID}))
			imp = readImport(t, imp.ID)
			require.Equal(t, "failed", imp.Status)
			require.NotNil(t, imp.Error)
			require.Contains(t, *imp.Error, "column")
		})

		t.Run("refusals", func(t *testing.T) {
			for _, tc := range []struct {
				name, token, contentType, query string
				body                            string
				status                          int
				code                            string
			}{
				{"JSON is no import file", writer, "application/json", "", `{"name":"x"}`, http.StatusUnsupportedMediaType, "unsupported_media_type"},
				{"no content type", writer, "", "", "a,b\n", http.StatusUnsupportedMediaType, "unsupported_media_type"},
				{"an empty file", writer, "text/csv", "", "", http.StatusUnprocessableEntity, "validation_error"},
				{"dry_run is no boolean", writer, "text/csv", "?dry_run=maybe", "name\n", http.StatusUnprocessableEntity, "validation_error"},
				{"a read-only token", reader, "text/csv", "", "name\n", http.StatusForbidden, "insufficient_scope"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					res := send(t, tc.token, tc.contentType, tc.query, []byte(tc.body))
					require.Equal(t, tc.status, res.status, "%s", res.body)
					require.Equal(t, tc.code, res.json(t)["error"])
				})
			}
			res := get(t, "/v1/customers/imports/imp_01jd3p7q8r9s0t1u2v3w4x5y6z")
			require.Equal(t, http.StatusNotFound, res.status)
			require.Equal(t, http.StatusNotFound, get(t, "/v1/customers/imports/imp_01jd3p7q8r9s0t1u2v3w4x5y6z/problems").status)
		})

		t.Run("another tenant's import is not found", func(t *testing.T) {
			other, err := f.app.Backoffice.CreateTenant(sys(), "Outra Loja", nil)
			require.NoError(t, err)
			c := f.clientOf(t, other.ID, apiclient.KindOauth, "customers:read")
			res := do(t, http.DefaultClient, bearerGet(t, f.srv.URL+"/v1/customers/imports/"+id, f.token(t, c, "customers:read")))
			require.Equal(t, http.StatusNotFound, res.status)
		})
	})
}
