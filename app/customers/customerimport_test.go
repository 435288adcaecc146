package customers_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/schema/sealed"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// importer is a tenant to import customers into.
type importer struct {
	t   testing.TB
	db  *storage.DB
	a   *app.App
	ctx context.Context
}

func newImporter(t testing.TB, db *storage.DB) *importer {
	t.Helper()
	env := apptest.New(t, db, apptest.WithTenant("Importadora"))
	return &importer{t: t, db: db, a: env.App, ctx: env.Ctx}
}

// run imports a file from after its line after, and returns the result and
// the problems reported, one "line field: message" each.
func (im *importer) run(file, format string, after int, opts customers.ImportOptions) (customers.ImportResult, []string, error) {
	im.t.Helper()
	rows, err := customers.CustomerFileRows(strings.NewReader(file), format, after)
	require.NoError(im.t, err)
	var problems []string
	opts.Problem = func(p customers.ImportProblem) {
		problems = append(problems, fmt.Sprintf("%d %s: %s", p.Line, p.Field, p.Message))
	}
	res, err := im.a.Customers.ImportCustomers(im.ctx, rows, opts)
	return res, problems, err
}

// total is the tenant's customer count as the list reports it, and the
// count of customers a search finds.
func (im *importer) total(search string) (all, found int) {
	im.t.Helper()
	list, err := im.a.Customers.ListCustomers(im.ctx, customers.CustomerFilter{}, nil, 1)
	require.NoError(im.t, err)
	hits, err := im.a.Customers.ListCustomers(im.ctx, customers.CustomerFilter{Search: search}, nil, 1)
	require.NoError(im.t, err)
	return list.TotalCount, hits.TotalCount
}

// importCSV is a file of n customers, CPFs from importCPF(first).
func importCSV(first, n int) string {
	var b strings.Builder
	b.WriteString("cpf,name,email,external_id,city,marketing_email\n")
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, "%s,Cliente Importado %d,importado%d@example.com,ERP-%d,Recife,sim\n", importCPF(i), i, i, i)
	}
	return b.String()
}

func importCPF(i int) string { return document.CPFOf(300_000_000 + i) }

// TestImportCustomers: valid rows load while each invalid one is reported
// with its line and field; a customer whose CPF, or else external id, is
// known is updated, not duplicated; an e-mail already another customer's
// is refused; afterwards the count and the search index include the new
// customers. A dry run reports the same and writes nothing.
func TestImportCustomers(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		im := newImporter(t, db)
		byCPF, err := im.a.Customers.CreateCustomer(im.ctx, customers.CustomerInput{Name: opt.Of("Ana Antiga"), Email: opt.Of("ana@example.com"),
			CPF: opt.Of(importCPF(1))})
		require.NoError(t, err)
		byExternal, err := im.a.Customers.CreateCustomer(im.ctx, customers.CustomerInput{Name: opt.Of("Bia Antiga"), Email: opt.Of("bia@example.com"),
			CPF: opt.Of(importCPF(900)), ExternalID: opt.Of("ERP-2")})
		require.NoError(t, err)
		_, err = im.a.Customers.CreateCustomer(im.ctx, customers.CustomerInput{Name: opt.Of("Caio"), Email: opt.Of("caio@example.com"),
			CPF: opt.Of(importCPF(901))})
		require.NoError(t, err)

		file := "\ufeffCPF,name,email,external_id,city,marketing_email\n" +
			importCPF(1) + ",Ana Nova,ana@example.com,,Recife,sim\n" + // line 2: updates by CPF
			importCPF(2) + ",Bia Nova,bia.nova@example.com,ERP-2,,\n" + // line 3: updates by external id
			importCPF(3) + ",Davi Importado,davi@example.com,,Olinda,não\n" + // 4: new
			"123,Erro CPF,erro@example.com,,,\n" + // 5: bad CPF
			importCPF(5) + ",,semnome@example.com,,,\n" + // 6: no name
			importCPF(6) + ",Consentimento,c@example.com,,,talvez\n" + // 7: bad consent cell
			importCPF(7) + ",Poucas\n" + // 8: too few cells
			importCPF(3) + ",Davi Repetido,davi2@example.com,,,\n" + // 9: CPF repeated in the file
			importCPF(9) + ",Caio Outro,CAIO@example.com,,,\n" + // 10: another customer's e-mail
			"\"" + importCPF(10) + ",Aspas\n" + // 11: a broken quote swallows the rest
			""
		want := []string{
			"5 cpf: is not a valid CPF (wrong number of characters)",
			"6 name: is required",
			"7 marketing_email: must be true or false",
			"8 : the line has 2 cells, the header 6",
			"9 cpf: repeats the CPF of line 4",
			"10 email: a customer with this e-mail is already registered",
		}

		dry, problems, err := im.run(file, "csv", 0, customers.ImportOptions{DryRun: true})
		require.NoError(t, err)
		require.Equal(t, customers.ImportResult{Rows: 10, Created: 1, Updated: 2, Refused: 7}, dry)
		all, _ := im.total("importado")
		require.Equal(t, 3, all, "a dry run writes nothing")

		res, problems2, err := im.run(file, "csv", 0, customers.ImportOptions{})
		require.NoError(t, err)
		require.Equal(t, dry, res, "the dry run foretold the import")
		require.Equal(t, problems, problems2)
		require.Len(t, problems, 7)
		require.Equal(t, want, problems[:6])
		require.Contains(t, problems[6], "11 : the line is not CSV")

		ana, err := im.a.Customers.Customer(im.ctx, byCPF.ID)
		require.NoError(t, err)
		require.Equal(t, "Ana Nova", ana.Name)
		require.True(t, ana.ConsentMarketingEmail)
		bia, err := im.a.Customers.Customer(im.ctx, byExternal.ID)
		require.NoError(t, err)
		require.Equal(t, [2]string{"Bia Nova", "bia.nova@example.com"}, [2]string{bia.Name, *bia.Email},
			"matched by external id")
		require.Equal(t, importCPF(2), bia.Document, "the row's CPF, no other customer's, corrects the one on file")
		all, found := im.total("importado")
		require.Equal(t, [2]int{4, 1}, [2]int{all, found}, "the count and the search index include the new customer")
		davi, err := im.db.Ent.Customer.Query().Where(customer.DocumentIndex(sealed.MustIndex(importCPF(3)))).Only(im.ctx)
		require.NoError(t, err)
		require.Equal(t, [2]any{"Olinda", false}, [2]any{*davi.AddressCity, davi.ConsentMarketingEmail})
	})
}

// TestImportCustomersResumes: an import stopped after its first batch
// resumes from the line it had committed and loads every row once; JSON
// Lines load as CSV does.
func TestImportCustomersResumes(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		im := newImporter(t, db)
		n := customers.ImportBatch*2 + 7
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"name":"Cliente Importado %d","email":"importado%d@example.com","cpf":%q,"consent":{"marketing_sms":true}}`+"\n",
				i, i, importCPF(i))
		}
		file := b.String()
		stop := errors.New("interrupted")
		committed := 0
		res, problems, err := im.run(file, "jsonl", 0, customers.ImportOptions{Done: func(line int, _ customers.ImportResult) error {
			committed = line
			return stop
		}})
		require.ErrorIs(t, err, stop)
		require.Empty(t, problems)
		require.Equal(t, customers.ImportBatch, committed)
		require.Equal(t, customers.ImportBatch, res.Created)

		res, problems, err = im.run(file, "jsonl", committed, customers.ImportOptions{})
		require.NoError(t, err)
		require.Empty(t, problems)
		require.Equal(t, customers.ImportResult{Rows: n - customers.ImportBatch, Created: n - customers.ImportBatch}, res,
			"the resumed import reads only the lines after the committed batch")
		all, found := im.total("importado")
		require.Equal(t, [2]int{n, n}, [2]int{all, found})
		sms, err := im.db.Ent.Customer.Query().Where(customer.ConsentMarketingSms(true)).Count(im.ctx)
		require.NoError(t, err)
		require.Equal(t, n, sms)

		// The whole file again: every row is a known CPF, updated in place.
		res, _, err = im.run(importCSV(0, 10), "csv", 0, customers.ImportOptions{})
		require.NoError(t, err)
		require.Equal(t, customers.ImportResult{Rows: 10, Updated: 10}, res)
		all, _ = im.total("importado")
		require.Equal(t, n, all)
	})
}

// TestCustomerFileHeader: a CSV file whose header cannot be a customer's is
// refused before any row.
func TestCustomerFileHeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, file, format, want string }{
		{"unknown column", "cpf,name,email,shoe_size\n", "csv", `unknown CSV column "shoe_size"`},
		// Without a header line the first customer's cells are not echoed.
		{"no header line", "529.982.247-25,Ana Souza,ana@example.com\n", "csv", "unknown CSV column number 1 (is the header line missing?); the columns are"},
		{"repeated column", "cpf,name,email,name\n", "csv", `"name" is repeated`},
		{"no email column", "cpf,name\n", "csv", `no "email" column`},
		{"empty file", "", "csv", "reading the CSV header"},
		{"unknown format", "", "xlsx", `unknown import format "xlsx"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := customers.CustomerFileRows(strings.NewReader(tc.file), tc.format, 0)
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "529.982", "no value of a row")
		})
	}
}

// writeBenchCustomers writes a CSV file of n customers (cpf, name, email,
// external id, city, state, a consent) and returns its path.
func writeBenchCustomers(b *testing.B, n int) string {
	path := filepath.Join(b.TempDir(), "customers.csv")
	f, err := os.Create(path)
	require.NoError(b, err)
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "cpf,name,email,external_id,city,state,marketing_email")
	for i := range n {
		fmt.Fprintf(w, "%s,Cliente Importado %d,importado%d@example.com,ERP-%d,São Paulo,SP,sim\n", importCPF(i), i, i, i)
	}
	require.NoError(b, w.Flush())
	require.NoError(b, f.Close())
	return path
}

// BenchmarkImportCustomers loads a CSV file of FIDELIZA_BENCH_CUSTOMERS
// customers (default 20,000) into an empty tenant on each database, as
// `fideliza import customers` does (writing the file is not measured), and
// reports the rows per second.
//
//	FIDELIZA_BENCH_CUSTOMERS=1000000 go test ./app/customers -run '^$' -bench ImportCustomers -benchtime 1x -timeout 60m
func BenchmarkImportCustomers(b *testing.B) {
	n := apptest.BenchCustomers(b)
	path := writeBenchCustomers(b, n)
	for _, d := range storagetest.Dialects() {
		b.Run(d, func(b *testing.B) {
			db := storagetest.Open(b, d)
			for b.Loop() {
				b.StopTimer()
				im := newImporter(b, db)
				in, err := os.Open(path)
				require.NoError(b, err)
				rows, err := customers.CustomerFileRows(in, "csv", 0)
				require.NoError(b, err)
				b.StartTimer()
				res, err := im.a.Customers.ImportCustomers(im.ctx, rows, customers.ImportOptions{})
				require.NoError(b, err)
				require.Equal(b, n, res.Created)
				require.NoError(b, in.Close())
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
