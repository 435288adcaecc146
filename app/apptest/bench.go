package apptest

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/ent/tenant"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// envBenchCustomers sizes the benchmarks of many customers.
const envBenchCustomers = "FIDELIZA_BENCH_CUSTOMERS"

// envBenchKeep names a directory where BenchTenant keeps its database
// across runs.
const envBenchKeep = "FIDELIZA_BENCH_KEEP"

// benchTenantName names the tenant BenchTenant writes.
const benchTenantName = "Benchmark"

// BenchCustomers is how many customers a benchmark makes: 20,000 unless
// FIDELIZA_BENCH_CUSTOMERS says.
func BenchCustomers(b *testing.B) int {
	v := os.Getenv(envBenchCustomers)
	if v == "" {
		return 20000
	}
	n, err := strconv.Atoi(v)
	require.NoError(b, err)
	return n
}

// BenchTenant writes, on a database of dialectName, a tenant of n
// customers with one to six processed sales each over the two years before
// the instant it answers (asOf), in bulk: the rows are made by the database
// itself (benchRows), a batch of customers a transaction, not through the
// application; it answers the application and the tenant's context.
//
// With FIDELIZA_BENCH_KEEP naming a directory, the database is kept across
// runs (storagetest.Kept: the SQLite file fz_bench_<n>.db in that directory,
// the PostgreSQL database fz_bench_<n>): the run that writes the tenant
// stops there (the benchmark is skipped), and the next runs find it and go
// straight to the timed part, so that part can be measured again quickly,
// under the shared lock, without writing a million customers each time:
//
//	FIDELIZA_BENCH_KEEP=/tmp FIDELIZA_BENCH_CUSTOMERS=1000000 go test ./app/audiences -run '^$' -bench 'PreviewAudience/sqlite3' -benchtime 1x -timeout 80m
//	FIDELIZA_BENCH_KEEP=/tmp FIDELIZA_BENCH_CUSTOMERS=1000000 flock /tmp/fideliza-bench.lock go test ./app/audiences -run '^$' -bench 'PreviewAudience/sqlite3' -benchtime 1x
//	rm /tmp/fz_bench_1000000.db # or DROP DATABASE fz_bench_1000000 when done
func BenchTenant(b *testing.B, dialectName string, n int) (*app.App, context.Context, time.Time) {
	asOf := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	sys := viewer.SystemContext(context.Background())
	var (
		db   *storage.DB
		kept string // the URL of a kept database written now
	)
	if dir := os.Getenv(envBenchKeep); dir != "" {
		u, created := storagetest.Kept(b, dialectName, dir, "fz_bench_"+strconv.Itoa(n))
		var err error
		db, err = storage.Open(context.Background(), u)
		require.NoError(b, err)
		b.Cleanup(func() { db.Close() })
		if !created {
			a := app.New(&app.Config{DB: db})
			tn, err := a.DB.Ent.Tenant.Query().Where(tenant.Name(benchTenantName)).Only(sys)
			require.NoError(b, err, "%s: no tenant written whole; remove it", u)
			ctx := viewer.TenantContext(context.Background(), tn.ID)
			whole, err := a.DB.Ent.Customer.Query().Count(ctx)
			require.NoError(b, err)
			require.Equal(b, n, whole, "%s: a tenant written in part; remove it", u)
			return a, ctx, asOf
		}
		kept = u
	} else {
		db = storagetest.Open(b, dialectName)
	}
	a := app.New(&app.Config{DB: db})
	tn, err := a.Backoffice.CreateTenant(sys, benchTenantName, nil)
	require.NoError(b, err)
	st, err := a.Backoffice.CreateStore(sys, tn.ID, "LOJA-01", "Loja", "norte")
	require.NoError(b, err)
	ctx := viewer.TenantContext(context.Background(), tn.ID)
	started := time.Now()
	rows := benchRows[dialectName]
	const batch = 50000
	for done := 0; done < n; done += batch {
		upTo := min(done+batch, n)
		require.NoError(b, db.InTx(sys, func(tx storage.Tx) error {
			if _, err := tx.SQL.ExecContext(sys, rows.customers, done, upTo, asOf, tn.ID); err != nil {
				return err
			}
			_, err := tx.SQL.ExecContext(sys, rows.sales, done, upTo, asOf, tn.ID, st.ID)
			return err
		}))
	}
	// Fresh statistics, as the service's own analysis would gather later:
	// without them PostgreSQL plans a page of customers as a scan of all.
	_, err = db.SQL.ExecContext(sys, "ANALYZE")
	require.NoError(b, err)
	sales, err := a.DB.Ent.Sale.Query().Count(ctx)
	require.NoError(b, err)
	b.Logf("%d customers and %d sales written in %v", n, sales, time.Since(started).Round(time.Millisecond))
	if kept != "" {
		b.Skipf("tenant kept in %s: run again to measure", kept)
	}
	return a, ctx, asOf
}

// benchRows are the statements that write the customers k in [$1, $2) of
// tenant $4 (document k, lifetime value k mod 2000 reais, created at $3)
// and their 1 + k mod 6 processed sales in store $5: sale j of customer k
// sold (k·31 + j·97) mod 730 days before $3, for 20 + (k·7 + j·13) mod 180
// reais.
var benchRows = map[string]struct{ customers, sales string }{
	dialect.SQLite: {
		customers: `WITH RECURSIVE k(n) AS (SELECT $1 UNION ALL SELECT n + 1 FROM k WHERE n + 1 < $2)
INSERT INTO customers (id, created_at, updated_at, tenant_id, document_type, document, name, lifetime_value, lifetime_value_cents)
SELECT printf('cus_%026d', n), $3, $3, $4, 'CPF', printf('%011d', n), 'Cliente ' || n, CAST(n % 2000 AS TEXT), n % 2000 * 100 FROM k`,
		sales: `WITH RECURSIVE k(n) AS (SELECT $1 UNION ALL SELECT n + 1 FROM k WHERE n + 1 < $2),
j(j) AS (VALUES (0), (1), (2), (3), (4), (5))
INSERT INTO sales (id, created_at, external_id, sold_at, amount, amount_payable, discount_amount, status, processed_at, tenant_id, store_id, customer_id)
SELECT printf('sal_%020d_%d', n, j), $3, n || '-' || j,
  strftime('%Y-%m-%d %H:%M:%S', $3, '-' || ((n * 31 + j * 97) % 730) || ' days') || '+00:00',
  CAST(20 + (n * 7 + j * 13) % 180 AS TEXT), CAST(20 + (n * 7 + j * 13) % 180 AS TEXT), '0', 'PROCESSED', $3, $4, $5,
  printf('cus_%026d', n)
FROM k JOIN j ON j <= n % 6`,
	},
	dialect.Postgres: {
		customers: `INSERT INTO customers (id, created_at, updated_at, tenant_id, document_type, document, name, lifetime_value, lifetime_value_cents)
SELECT 'cus_' || lpad(n::text, 26, '0'), $3, $3, $4, 'CPF', lpad(n::text, 11, '0'), 'Cliente ' || n, n % 2000, n % 2000 * 100
FROM generate_series($1::bigint, $2::bigint - 1) n`,
		sales: `INSERT INTO sales (id, created_at, external_id, sold_at, amount, amount_payable, discount_amount, status, processed_at, tenant_id, store_id, customer_id)
SELECT 'sal_' || lpad(n::text, 20, '0') || '_' || j, $3, n || '-' || j,
  $3::timestamptz - ((n * 31 + j * 97) % 730) * interval '1 day',
  20 + (n * 7 + j * 13) % 180, 20 + (n * 7 + j * 13) % 180, 0, 'PROCESSED', $3, $4, $5, 'cus_' || lpad(n::text, 26, '0')
FROM generate_series($1::bigint, $2::bigint - 1) n, generate_series(0, 5) j WHERE j <= n % 6`,
	},
}
