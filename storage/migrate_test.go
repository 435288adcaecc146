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

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
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
			require.NoError(t, db.Migrate(ctx, slog.New(slog.DiscardHandler)))
			require.NoError(t, db.Migrate(ctx, slog.New(slog.DiscardHandler)))
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
					errs[i] = db.Migrate(ctx, slog.New(slog.DiscardHandler))
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
