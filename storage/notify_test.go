package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent/change"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestListenHearsCommits: a commit adding outbox events wakes the
// listeners of storage.EventsChannel, of another pool (process) on
// PostgreSQL and of the committing one on SQLite.
func TestListenHearsCommits(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			u := storagetest.URL(t, d, true)
			open := func() *storage.DB { return storagetest.OpenURL(t, u) }
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

// TestSubscribeHearsChanges: a subscriber of storage.ChangesChannel hears
// when it listens, each committed change with its tenant and part (not one
// rolled back), and on PostgreSQL a lost connection then its return;
// Tx.OnCommit runs at commit only.
func TestSubscribeHearsChanges(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx, cancel := context.WithCancel(viewer.SystemContext(context.Background()))
		defer cancel()
		tn, err := db.Ent.Tenant.Create().SetName("Loja").Save(ctx)
		require.NoError(t, err)
		heard, listening := make(chan string, 16), make(chan bool, 16)
		subscribed := db.Subscribe(ctx, storage.ChangesChannel, &storage.Subscriber{
			Notified: func(p string) { heard <- p }, Listening: func(on bool) { listening <- on }})
		require.True(t, subscribed)
		committed := 0
		write := func(part change.Part, fail error) error {
			return db.InTx(ctx, func(tx storage.Tx) error {
				tx.OnCommit(func() { committed++ })
				if err := tx.Ent.Change.Create().SetTenantID(tn.ID).SetPart(part).Exec(ctx); err != nil {
					return err
				}
				return fail
			})
		}
		rollback := errors.New("rolled back")
		require.ErrorIs(t, write(change.PartSettings, rollback), rollback)
		require.NoError(t, write(change.PartCampaigns, nil))
		require.Equal(t, 1, committed, "OnCommit runs for the commit only")
		wait := func(ch <-chan bool) bool {
			select {
			case on := <-ch:
				return on
			case <-time.After(30 * time.Second):
				t.Fatal("the subscriber was not told")
				return false
			}
		}
		require.True(t, wait(listening))
		require.NoError(t, write(change.PartStores, nil))
		select {
		case p := <-heard:
			// The change committed before it listened may come first.
			if p != tn.ID+" stores " {
				require.Equal(t, tn.ID+" campaigns ", p)
				require.Equal(t, tn.ID+" stores ", <-heard)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the change was not heard")
		}
		if db.Dialect == "sqlite3" {
			return
		}
		// The listening connection lost: the subscriber is told, then told
		// again when it is back.
		_, err = db.SQL.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND query = 'LISTEN "fideliza_changes"'`)
		require.NoError(t, err)
		require.False(t, wait(listening))
		require.True(t, wait(listening))
	})
}

// TestSubscribeHearsOtherProcesses: a change committed through another
// handle of the same database (another process) reaches a subscriber
// within a second, on SQLite as on PostgreSQL, with its payload.
func TestSubscribeHearsOtherProcesses(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			u := storagetest.URL(t, d, true)
			open := func() *storage.DB { return storagetest.OpenURL(t, u) }
			writer, listener := open(), open()
			ctx, cancel := context.WithCancel(viewer.SystemContext(context.Background()))
			defer cancel()
			heard, listening := make(chan string, 16), make(chan bool, 16)
			require.True(t, listener.Subscribe(ctx, storage.ChangesChannel, &storage.Subscriber{
				Notified: func(p string) { heard <- p }, Listening: func(on bool) { listening <- on }}))
			select {
			case on := <-listening:
				require.True(t, on)
			case <-time.After(30 * time.Second):
				t.Fatal("the subscriber was not told it listens")
			}
			tn, err := writer.Ent.Tenant.Create().SetName("Loja").Save(ctx)
			require.NoError(t, err)
			require.NoError(t, writer.InTx(ctx, func(tx storage.Tx) error {
				return tx.Ent.Change.Create().SetTenantID(tn.ID).SetPart(change.PartSettings).SetOrigin("cli").Exec(ctx)
			}))
			committed := time.Now()
			select {
			case p := <-heard:
				require.Equal(t, tn.ID+" settings cli", p)
				require.Less(t, time.Since(committed), time.Second)
			case <-time.After(30 * time.Second):
				t.Fatal("the other process's change was not heard")
			}
		})
	}
}
