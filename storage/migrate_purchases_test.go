package storage_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestMigrationCountsPurchases (issue 52): migration 0048 gives the
// customers of an existing database their purchases and last purchase, as
// the purchases' rollup counts them: a sale returned or cancelled whole is
// none, one partly returned is one, a sale not processed is none.
func TestMigrationCountsPurchases(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		const tenant = `'de000000-0000-4000-8000-000000000048'`
		for _, q := range []string{
			`INSERT INTO tenants (id, created_at, updated_at, name, sale_tolerance, points_per_real) VALUES (` + tenant + `, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'T', '0.10', '1')`,
			`INSERT INTO stores (id, created_at, updated_at, code, name, tenant_id) VALUES ('sto_1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'LJ01', 'Loja', ` + tenant + `),
				('sto_2', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'LJ02', 'Loja 2', ` + tenant + `)`,
			`INSERT INTO customers (id, created_at, updated_at, name, document, lifetime_value, tenant_id) VALUES
				('cus_a', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'Ana', '1', '0', ` + tenant + `),
				('cus_b', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'Bruno', '2', '0', ` + tenant + `),
				('cus_c', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'Carla', '3', '0', ` + tenant + `)`,
			`INSERT INTO sales (id, created_at, external_id, sold_at, amount, amount_payable, discount_amount, status, tenant_id, store_id, customer_id) VALUES
				('sal_1', CURRENT_TIMESTAMP, '1', '2026-03-01 12:00:00+00:00', '10', '10', '0', 'PROCESSED', ` + tenant + `, 'sto_1', 'cus_a'),
				('sal_2', CURRENT_TIMESTAMP, '2', '2026-05-02 08:30:15+00:00', '10', '10', '0', 'PARTIALLY_RETURNED', ` + tenant + `, 'sto_2', 'cus_a'),
				('sal_3', CURRENT_TIMESTAMP, '3', '2026-06-01 12:00:00+00:00', '10', '10', '0', 'RETURNED', ` + tenant + `, 'sto_1', 'cus_a'),
				('sal_4', CURRENT_TIMESTAMP, '4', '2026-07-01 12:00:00+00:00', '10', '10', '0', 'CANCELLED', ` + tenant + `, 'sto_1', 'cus_b'),
				('sal_5', CURRENT_TIMESTAMP, '5', '2026-07-02 12:00:00+00:00', '10', '10', '0', 'RECEIVED', ` + tenant + `, 'sto_1', 'cus_b'),
				('sal_6', CURRENT_TIMESTAMP, '6', '2026-01-10 23:59:59+00:00', '10', '10', '0', 'PROCESSED', ` + tenant + `, 'sto_2', 'cus_c')`,
			// The database as it was before 0048: its columns and indexes gone.
			`DROP INDEX IF EXISTS customer_tenant_id_sales_count_id`,
			`DROP INDEX IF EXISTS customer_tenant_id_last_purchase_unix_id`,
			`ALTER TABLE customers DROP COLUMN sales_count`,
			`ALTER TABLE customers DROP COLUMN last_purchase_at`,
			`ALTER TABLE customers DROP COLUMN last_purchase_unix`,
			// And without what the later migrations add (0051's wallets,
			// 0052's holds and spending rules, 0053's gift cards, 0054's gift cards sold at the till).
			`DROP TABLE wallet_holds`, `DROP TABLE wallet_lots`, `DROP TABLE wallet_entries`, `DROP TABLE wallets`,
			`DROP TABLE gift_card_entries`, `DROP TABLE gift_cards`,
			`ALTER TABLE tenants DROP COLUMN cashback_as_points`,
			`ALTER TABLE tenants DROP COLUMN cashback_spend_channels`, `ALTER TABLE tenants DROP COLUMN cashback_spend_max_share`,
			`ALTER TABLE tenants DROP COLUMN cashback_spend_min`,
			`DROP INDEX IF EXISTS saleitem_tenant_id_gift_card_id`, `ALTER TABLE sale_items DROP COLUMN gift_card_id`, // 0054
			`DELETE FROM fideliza_migrations WHERE version >= 48`,
		} {
			_, err := db.SQL.ExecContext(ctx, q)
			require.NoError(t, err, q)
		}
		_, err := db.Migrate(ctx, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		for _, c := range []struct {
			id    string
			count int64
			unix  int64
		}{
			{"cus_a", 2, 1777710615}, // 2026-05-02T08:30:15Z: the sale returned whole is none
			{"cus_b", 0, 0},          // cancelled, and not processed
			{"cus_c", 1, 1768089599}, // 2026-01-10T23:59:59Z
		} {
			var count, unix int64
			var last *string
			require.NoError(t, db.SQL.QueryRowContext(ctx, `SELECT sales_count, last_purchase_unix, CAST(last_purchase_at AS TEXT) FROM customers WHERE id = $1`, c.id).
				Scan(&count, &unix, &last))
			require.Equal(t, c.count, count, c.id)
			require.Equal(t, c.unix, unix, c.id)
			require.Equal(t, c.count > 0, last != nil, c.id)
		}
	})
}
