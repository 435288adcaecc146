package storage_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/schema/sealed"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestMigrationsMatchSchema fails when ent/schema changed without a migration,
// and prints the SQL of the missing migration.
func TestMigrationsMatchSchema(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		var buf bytes.Buffer
		require.NoError(t, db.Ent.Schema.WriteTo(context.Background(), &buf))
		diff := strings.TrimSpace(strings.NewReplacer("BEGIN;", "", "COMMIT;", "").Replace(buf.String()))
		dir := db.Dialect
		if dir == dialect.SQLite {
			dir = "sqlite"
		}
		if diff != "" {
			t.Fatalf("ent/schema differs from migrations/%s: add the next migrations/%s/NNNN_name.sql with:\n%s", dir, dir, diff)
		}
	})
}

func TestMigrateIsIdempotentAndReady(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storagetest.Empty(t, d)
			require.Error(t, db.Ready(ctx), "an empty database is not ready")
			all, err := storage.Migrations(d)
			require.NoError(t, err)
			last := all[len(all)-1].Version
			done, err := db.Migrate(ctx, slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			require.Equal(t, storage.Migrated{Applied: len(all), Version: last}, done)
			done, err = db.Migrate(ctx, slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			require.Equal(t, storage.Migrated{Applied: 0, Version: last}, done, "nothing to apply the second time")
			require.NoError(t, db.Ready(ctx))
		})
	}
}

// TestConcurrentMigrate is several processes starting at once on one
// database: every one succeeds and the schema is applied once.
func TestConcurrentMigrate(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			u := storagetest.URL(t, d, false)
			const processes = 4
			errs := make([]error, processes)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range processes {
				db, err := storage.Open(ctx, u)
				require.NoError(t, err)
				t.Cleanup(func() { db.Close() })
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, errs[i] = db.Migrate(ctx, slog.New(slog.DiscardHandler))
				}()
			}
			close(start)
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}
			db, err := storage.Open(ctx, u)
			require.NoError(t, err)
			defer db.Close()
			all, err := storage.Migrations(d)
			require.NoError(t, err)
			var applied int
			require.NoError(t, db.SQL.QueryRowContext(ctx, `SELECT count(*) FROM fideliza_migrations`).Scan(&applied))
			require.Equal(t, len(all), applied)
			require.NoError(t, db.Ready(ctx))
		})
	}
}

// TestMigrationsKeepData applies each migration to a database holding rows
// of every table that exists at that version, and checks the rows survive
// (SQLite table rebuilds must not cascade-delete what references them).
func TestMigrationsKeepData(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storagetest.Empty(t, d)
			all, err := storage.Migrations(d)
			require.NoError(t, err)
			_, err = db.SQL.ExecContext(ctx, `CREATE TABLE fideliza_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP)`)
			require.NoError(t, err)
			// The first migration, then a customer in a segment, then the rest.
			_, err = db.SQL.ExecContext(ctx, all[0].SQL)
			require.NoError(t, err)
			_, err = db.SQL.ExecContext(ctx, `INSERT INTO fideliza_migrations (version, name) VALUES (1, 'init')`)
			require.NoError(t, err)
			for _, q := range []string{
				`INSERT INTO tenants (id, created_at, updated_at, name, sale_tolerance, points_per_real) VALUES ('de000000-0000-4000-8000-000000000009', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'T', '0.10', '1')`,
				`INSERT INTO customers (id, created_at, updated_at, name, document, lifetime_value, tenant_id) VALUES ('cus_1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'Ana', '52998224725', '0', 'de000000-0000-4000-8000-000000000009')`,
				`INSERT INTO segments (id, created_at, updated_at, name, tenant_id) VALUES ('seg_1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'VIP', 'de000000-0000-4000-8000-000000000009')`,
				`INSERT INTO customer_segments (customer_id, segment_id) VALUES ('cus_1', 'seg_1')`,
			} {
				_, err := db.SQL.ExecContext(ctx, q)
				require.NoError(t, err, q)
			}
			clearKey := []byte("\x30\x81\x87 a PKCS #8 DER key in clear")
			_, err = db.SQL.ExecContext(ctx, `INSERT INTO signing_keys (id, algorithm, private_key, created_at) VALUES ('key_1', 'ES256', $1, CURRENT_TIMESTAMP)`, clearKey)
			require.NoError(t, err)
			_, err = db.Migrate(ctx, slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			var members int
			require.NoError(t, db.SQL.QueryRowContext(ctx, `SELECT count(*) FROM customer_segments`).Scan(&members))
			require.Equal(t, 1, members, "a migration deleted segment memberships")
			var name string
			require.NoError(t, db.SQL.QueryRowContext(ctx, `SELECT name FROM customers WHERE id = 'cus_1'`).Scan(&name))
			require.Equal(t, "Ana", name)

			// The document stored in clear before sealing is sealed and
			// indexed at the migration, and found by its index.
			var stored, index string
			require.NoError(t, db.SQL.QueryRowContext(ctx, `SELECT document, document_index FROM customers WHERE id = 'cus_1'`).Scan(&stored, &index))
			key, err := sealed.CurrentKeyID()
			require.NoError(t, err)
			require.True(t, sealed.SealedUnder(stored, key), "sealed: %s", stored)
			require.Equal(t, sealed.MustIndex("52998224725"), index)
			sys := viewer.SystemContext(ctx)
			c, err := db.Ent.Customer.Query().Where(customer.DocumentIndex(index)).Only(sys)
			require.NoError(t, err)
			require.Equal(t, "52998224725", c.Document)

			// So is the signing key stored in clear.
			var storedKey []byte
			require.NoError(t, db.SQL.QueryRowContext(ctx, `SELECT private_key FROM signing_keys WHERE id = 'key_1'`).Scan(&storedKey))
			require.True(t, sealed.SealedUnder(string(storedKey), key), "sealed: %q", storedKey)
			k, err := db.Ent.SigningKey.Get(sys, "key_1")
			require.NoError(t, err)
			require.Equal(t, clearKey, k.PrivateKey)
		})
	}
}
