package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestListenHearsCommits: a commit adding outbox events wakes the
// listeners of storage.EventsChannel, of another pool (process) on
// PostgreSQL and of the committing one on SQLite.
func TestListenHearsCommits(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			u := storagetest.URL(t, d, true)
			open := func() *storage.DB {
				db, err := storage.Open(context.Background(), u)
				require.NoError(t, err)
				t.Cleanup(func() { db.Close() })
				return db
			}
			writer, listener := open(), open()
			if d == "sqlite3" {
				listener = writer // SQLite wakes the committing process's listeners
			}
			ctx, cancel := context.WithCancel(viewer.SystemContext(context.Background()))
			defer cancel()
			wake := listener.Listen(ctx, storage.EventsChannel)
			if d != "sqlite3" {
				<-wake // listening (the first wake-up says so)
			}
			tn, err := writer.Ent.Tenant.Create().SetName("Loja").Save(ctx)
			require.NoError(t, err)
			select {
			case <-wake:
				t.Fatal("a commit without events woke the listener")
			default:
			}
			require.NoError(t, writer.InTx(ctx, func(tx storage.Tx) error {
				return tx.Ent.Event.Create().SetTenantID(tn.ID).SetType("sale.processed").SetData(map[string]any{}).Exec(ctx)
			}))
			select {
			case <-wake:
			case <-time.After(30 * time.Second):
				t.Fatal("the commit did not wake the listener")
			}
		})
	}
}
