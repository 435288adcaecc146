package webhooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/webhooks"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestSlowSubscriberDropped: a subscriber that leaves more than FeedBuffer
// events unread is dropped (its events closed, Dropped), not buffered for;
// one that reads gets every event.
func TestSlowSubscriberDropped(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		env := apptest.New(t, db)
		a, tenantID := env.App, env.TenantID
		sys := viewer.SystemContext(context.Background())
		ctx, cancel := context.WithCancel(viewer.NewContext(context.Background(),
			viewer.Viewer{Role: viewer.RoleAnalyst, TenantID: tenantID, Subject: "user:office"}))
		defer cancel()
		slow, err := a.Webhooks.SubscribeEvents(ctx, outbox.SaleProcessed)
		require.NoError(t, err)
		record := func(n int) {
			require.NoError(t, db.InTx(sys, func(tx storage.Tx) error {
				events := make([]*ent.EventCreate, n)
				for i := range events {
					events[i] = outbox.New(tx.Ent, time.Now(), tenantID, outbox.SaleProcessed, "sal", nil)
				}
				return tx.Ent.Event.CreateBulk(events...).Exec(sys)
			}))
		}
		record(webhooks.FeedBuffer + 1)
		// Nothing is read until the feed has handed the events over.
		for deadline := time.Now().Add(30 * time.Second); !slow.Dropped(); time.Sleep(10 * time.Millisecond) { // polls until the deadline
			require.True(t, time.Now().Before(deadline), "the slow subscriber was not dropped")
		}
		var got int
		for range slow.Events {
			got++
		}
		require.True(t, slow.Dropped())
		require.Equal(t, webhooks.FeedBuffer, got, "what it had left unread, no more")

		reader, err := a.Webhooks.SubscribeEvents(ctx, outbox.SaleProcessed)
		require.NoError(t, err)
		record(3)
		for range 3 {
			require.Equal(t, "sal", (<-reader.Events).SubjectID)
		}
		cancel()
		for range reader.Events { // closed when its context ends
		}
		require.False(t, reader.Dropped())
	})
}
