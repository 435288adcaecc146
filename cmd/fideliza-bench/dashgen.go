package main

import (
	"context"
	"fmt"
	"time"

	"entgo.io/ent/dialect"

	"github.com/fideliza/fideliza/domain/rollup"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// salesGrowth adds the dashboards load's processed sales to the tenant in
// bulk, set-based: sale n (counted from 0) is sold (n·7919) mod 31,536,000
// seconds before the growth began (spread over the last 365 days), in the
// tenant's store n mod stores, for 5.00 + (n·104729 mod 50,000)/100 reais;
// four in five (n mod 5 ≠ 0) have customer (n·48271) mod customers and
// their points credited (the whole reais), and one in twenty (n mod 20 = 1)
// a redemption of a 5.00 discount from campaign n mod 10 of the tenant's
// first ten discounts. Stores, customers and campaigns are numbered in the
// order of their ids.
//
// The rows' triggers (the rollups, 0027, and purchases by store, 0037)
// held the growth to about 400 sales a second on PostgreSQL and 200 on
// SQLite on the 2-core machine, so the rows go in without them, for the
// transaction only (PostgreSQL: session_replication_role = replica;
// SQLite: the three tables' triggers dropped and created again in the same
// transaction, so no other connection sees them missing), and the tenant's
// rollups are rebuilt from the rows once the size is reached: the rebuild
// command's statements, and the purchases by store as 0037 first filled
// them.
type salesGrowth struct {
	db       *storage.DB
	tenantID string
	sales    int
	now      time.Time
}

// growthBatch is how many sales one transaction adds: large enough that
// the triggers' per-statement work is spread over many rows.
var growthBatch = map[string]int{dialect.Postgres: 200_000, dialect.SQLite: 250_000}

func newSalesGrowth(ctx context.Context, db *storage.DB, tenantID string) (*salesGrowth, error) {
	tctx := viewer.TenantContext(ctx, tenantID)
	n, err := db.Ent.Sale.Query().Where(sale.ExternalIDHasPrefix("B")).Count(tctx)
	if err != nil {
		return nil, err
	}
	g := &salesGrowth{db: db, tenantID: tenantID, sales: n, now: time.Now().UTC().Truncate(time.Second)}
	if n > 0 { // a database grown before: the spread goes on from the first growth's instant (sale 0's)
		first, err := db.Ent.Sale.Query().Where(sale.ExternalID("B0")).Only(tctx)
		if err != nil {
			return nil, err
		}
		g.now = first.SoldAt.UTC()
	}
	return g, nil
}

// growTo adds sales until the tenant has n of the growth's, then rebuilds
// its rollups (not when it had them already).
func (g *salesGrowth) growTo(ctx context.Context, n int) error {
	if g.sales >= n {
		return nil
	}
	stmts := growthRows[g.db.Dialect]
	now := any(g.now)
	if g.db.Dialect == dialect.SQLite {
		now = g.now.Format(time.DateTime) // SQLite's date functions read this
	}
	if g.db.Dialect == dialect.SQLite {
		restore, err := sqliteBulk(ctx, g.db)
		if err != nil {
			return err
		}
		defer restore()
	}
	for g.sales < n {
		upTo := min(g.sales+growthBatch[g.db.Dialect], n)
		err := g.db.InTx(viewer.SystemContext(ctx), func(tx storage.Tx) error {
			restoreTriggers, err := withoutTriggers(ctx, tx, g.db.Dialect)
			if err != nil {
				return err
			}
			for _, q := range stmts.numbered {
				if _, err := tx.SQL.ExecContext(ctx, q, g.tenantID); err != nil {
					return err
				}
			}
			for _, q := range []string{stmts.sales, stmts.entries, stmts.redemptions} {
				if _, err := tx.SQL.ExecContext(ctx, q, g.sales, upTo, now, g.tenantID); err != nil {
					return err
				}
			}
			return restoreTriggers()
		})
		if err != nil {
			return fmt.Errorf("adding sales: %w", err)
		}
		g.sales = upTo
	}
	return g.db.InTx(viewer.SystemContext(ctx), func(tx storage.Tx) error {
		if err := rollup.Rebuild(ctx, tx.SQL, g.db.Rebind, g.tenantID); err != nil {
			return fmt.Errorf("rebuilding the rollups: %w", err)
		}
		if _, err := tx.SQL.ExecContext(ctx, g.db.Rebind(`DELETE FROM rollup_customer_stores WHERE tenant_id = ?`), g.tenantID); err != nil {
			return err
		}
		_, err := tx.SQL.ExecContext(ctx, g.db.Rebind(customerStores), g.tenantID)
		return err
	})
}

// grownTables are the tables the growth writes: their triggers stand
// aside while it does.
var grownTables = []string{"sales", "points_entries", "redemptions"}

// withoutTriggers turns the grown tables' triggers off for the rest of tx
// and returns what turns them on again before it commits (nothing to do on
// PostgreSQL, where the setting ends with the transaction).
func withoutTriggers(ctx context.Context, tx storage.Tx, dbDialect string) (func() error, error) {
	if dbDialect == dialect.Postgres {
		_, err := tx.SQL.ExecContext(ctx, `SET LOCAL session_replication_role = replica`)
		return func() error { return nil }, err
	}
	rows, err := tx.SQL.QueryContext(ctx, `SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN (?, ?, ?)`,
		grownTables[0], grownTables[1], grownTables[2])
	if err != nil {
		return nil, err
	}
	var names, creates []string
	for rows.Next() {
		var name, create string
		if err := rows.Scan(&name, &create); err != nil {
			rows.Close()
			return nil, err
		}
		names, creates = append(names, name), append(creates, create)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, name := range names {
		if _, err := tx.SQL.ExecContext(ctx, "DROP TRIGGER `"+name+"`"); err != nil {
			return nil, err
		}
	}
	return func() error {
		for _, create := range creates {
			if _, err := tx.SQL.ExecContext(ctx, create); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// sqliteBulk sets the bench's database file for a bulk write on the
// connection that writes (the only one, kept open): a page cache of a GiB,
// so the indexes' pages stay in memory, and no sync at each commit (a
// crash loses the growth, which starts again). It returns what sets them
// back.
func sqliteBulk(ctx context.Context, db *storage.DB) (func(), error) {
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var cacheSize, synchronous int
	if err := conn.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&cacheSize); err != nil {
		return nil, err
	}
	if err := conn.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&synchronous); err != nil {
		return nil, err
	}
	for _, q := range []string{`PRAGMA cache_size = -1048576`, `PRAGMA synchronous = OFF`} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return nil, err
		}
	}
	return func() {
		conn, err := db.SQL.Conn(context.WithoutCancel(ctx))
		if err != nil {
			return
		}
		defer conn.Close()
		conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA cache_size = %d`, cacheSize))
		conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA synchronous = %d`, synchronous))
	}, nil
}

// customerStores fills the tenant's purchases by store from its sales, as
// migration 0037 first filled them.
const customerStores = `INSERT INTO rollup_customer_stores (tenant_id, customer_id, store_id, purchases, last_sold_at)
SELECT tenant_id, customer_id, store_id, count(*), max(sold_at) FROM sales
WHERE tenant_id = ? AND customer_id IS NOT NULL AND status IN ('PROCESSED', 'PARTIALLY_RETURNED')
GROUP BY tenant_id, customer_id, store_id`

// growthRows are the statements that add sales n in [$1, $2) of tenant $4
// grown at $3, their points entries and their redemptions, as salesGrowth
// says.
var growthRows = map[string]struct {
	numbered                    []string // statements numbering the stores, customers and campaigns first (SQLite)
	sales, entries, redemptions string
}{
	dialect.Postgres: {
		sales: `WITH st AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM stores WHERE tenant_id = $4),
c AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM customers WHERE tenant_id = $4),
g AS (SELECT n, $3::timestamptz - ((n * 7919) % 31536000) * interval '1 second' AS at, (500 + (n * 104729) % 50000) / 100.0 AS amount,
  n % (SELECT count(*) FROM st) AS sk, CASE WHEN n % 5 <> 0 THEN (n * 48271) % (SELECT count(*) FROM c) END AS ck
  FROM generate_series($1::bigint, $2::bigint - 1) n)
INSERT INTO sales (id, created_at, external_id, sold_at, amount, amount_payable, discount_amount, status, processed_at, tenant_id, store_id, customer_id)
SELECT 'sal_B' || g.n, g.at, 'B' || g.n, g.at, g.amount, g.amount, 0, 'PROCESSED', g.at, $4, st.id, c.id
FROM g JOIN st ON st.k = g.sk LEFT JOIN c ON c.k = g.ck`,
		entries: `WITH c AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM customers WHERE tenant_id = $4),
g AS (SELECT n, $3::timestamptz - ((n * 7919) % 31536000) * interval '1 second' AS at, (500 + (n * 104729) % 50000) / 100 AS points,
  (n * 48271) % (SELECT count(*) FROM c) AS ck
  FROM generate_series($1::bigint, $2::bigint - 1) n WHERE n % 5 <> 0)
INSERT INTO points_entries (id, created_at, kind, points, balance_after, source_kind, source_id, customer_id, tenant_id)
SELECT 'pte_B' || g.n, g.at, 'credit', g.points, g.points, 'sale', 'B' || g.n, c.id, $4
FROM g JOIN c ON c.k = g.ck`,
		redemptions: `WITH c AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM customers WHERE tenant_id = $4),
cp AS (SELECT id, row_number() OVER (ORDER BY created_at, id) - 1 AS k
  FROM (SELECT id, created_at FROM campaigns WHERE tenant_id = $4 AND type = 'discount' ORDER BY created_at, id LIMIT 10) x),
g AS (SELECT n, $3::timestamptz - ((n * 7919) % 31536000) * interval '1 second' AS at, (500 + (n * 104729) % 50000) / 100.0 AS amount,
  (n * 48271) % (SELECT count(*) FROM c) AS ck, n % (SELECT count(*) FROM cp) AS pk
  FROM generate_series($1::bigint, $2::bigint - 1) n WHERE n % 20 = 1)
INSERT INTO redemptions (id, created_at, order_id, amount_paid, discount_amount, cashback_amount, benefit, campaign_id, customer_id, tenant_id)
SELECT 'red_B' || g.n, g.at, 'B' || g.n, g.amount - 5, 5, 0, '{"type":"discount"}', cp.id, c.id, $4
FROM g JOIN c ON c.k = g.ck JOIN cp ON cp.k = g.pk`,
	},
	dialect.SQLite: {
		numbered: []string{`CREATE TEMP TABLE IF NOT EXISTS bench_ids (kind TEXT NOT NULL, k INTEGER NOT NULL, id TEXT NOT NULL, PRIMARY KEY (kind, k))`,
			`DELETE FROM bench_ids`,
			`INSERT INTO bench_ids SELECT 's', row_number() OVER (ORDER BY id) - 1, id FROM stores WHERE tenant_id = $1`,
			`INSERT INTO bench_ids SELECT 'c', row_number() OVER (ORDER BY id) - 1, id FROM customers WHERE tenant_id = $1`,
			`INSERT INTO bench_ids SELECT 'p', row_number() OVER (ORDER BY created_at, id) - 1, id
  FROM (SELECT id, created_at FROM campaigns WHERE tenant_id = $1 AND type = 'discount' ORDER BY created_at, id LIMIT 10)`},
		sales: `WITH RECURSIVE k(n) AS (SELECT $1 UNION ALL SELECT n + 1 FROM k WHERE n + 1 < $2),
g AS (SELECT n, strftime('%Y-%m-%d %H:%M:%S', $3, '-' || ((n * 7919) % 31536000) || ' seconds') || '+00:00' AS at,
  500 + (n * 104729) % 50000 AS cents FROM k)
INSERT INTO sales (id, created_at, external_id, sold_at, amount, amount_payable, discount_amount, status, processed_at, tenant_id, store_id, customer_id)
SELECT 'sal_B' || g.n, g.at, 'B' || g.n, g.at, printf('%d.%02d', g.cents / 100, g.cents % 100), printf('%d.%02d', g.cents / 100, g.cents % 100),
  '0', 'PROCESSED', g.at, $4, (SELECT id FROM bench_ids WHERE kind = 's' AND k = g.n % (SELECT count(*) FROM bench_ids WHERE kind = 's')),
  CASE WHEN g.n % 5 <> 0 THEN (SELECT id FROM bench_ids WHERE kind = 'c' AND k = (g.n * 48271) % (SELECT count(*) FROM bench_ids WHERE kind = 'c')) END
FROM g`,
		entries: `WITH RECURSIVE k(n) AS (SELECT $1 UNION ALL SELECT n + 1 FROM k WHERE n + 1 < $2),
g AS (SELECT n, strftime('%Y-%m-%d %H:%M:%S', $3, '-' || ((n * 7919) % 31536000) || ' seconds') || '+00:00' AS at,
  (500 + (n * 104729) % 50000) / 100 AS points FROM k WHERE n % 5 <> 0)
INSERT INTO points_entries (id, created_at, kind, points, balance_after, source_kind, source_id, customer_id, tenant_id)
SELECT 'pte_B' || g.n, g.at, 'credit', g.points, g.points, 'sale', 'B' || g.n,
  (SELECT id FROM bench_ids WHERE kind = 'c' AND k = (g.n * 48271) % (SELECT count(*) FROM bench_ids WHERE kind = 'c')), $4
FROM g`,
		redemptions: `WITH RECURSIVE k(n) AS (SELECT $1 UNION ALL SELECT n + 1 FROM k WHERE n + 1 < $2),
g AS (SELECT n, strftime('%Y-%m-%d %H:%M:%S', $3, '-' || ((n * 7919) % 31536000) || ' seconds') || '+00:00' AS at,
  500 + (n * 104729) % 50000 - 500 AS paid FROM k WHERE n % 20 = 1)
INSERT INTO redemptions (id, created_at, order_id, amount_paid, discount_amount, cashback_amount, benefit, campaign_id, customer_id, tenant_id)
SELECT 'red_B' || g.n, g.at, 'B' || g.n, printf('%d.%02d', g.paid / 100, g.paid % 100), '5', '0', '{"type":"discount"}',
  (SELECT id FROM bench_ids WHERE kind = 'p' AND k = g.n % (SELECT count(*) FROM bench_ids WHERE kind = 'p')),
  (SELECT id FROM bench_ids WHERE kind = 'c' AND k = (g.n * 48271) % (SELECT count(*) FROM bench_ids WHERE kind = 'c')), $4
FROM g`,
	},
}
