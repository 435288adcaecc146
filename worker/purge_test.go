package worker_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/worker"
)

func TestPurgeExpired(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := viewer.SystemContext(context.Background())
		now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
		tn, err := db.Ent.Tenant.Create().SetName("Loja").Save(ctx)
		require.NoError(t, err)
		cu, err := db.Ent.Customer.Create().SetTenantID(tn.ID).SetName("Ana").SetDocument("52998224725").Save(ctx)
		require.NoError(t, err)
		token := func(hash string, expires time.Time) string {
			v, err := db.Ent.ValidationToken.Create().SetTenantID(tn.ID).SetCustomerID(cu.ID).SetTokenHash(hash).
				SetCart(json.RawMessage(`{}`)).SetBenefits(json.RawMessage(`[]`)).SetCampaignIds([]string{}).
				SetExpiresAt(expires).Save(ctx)
			require.NoError(t, err)
			return v.ID
		}
		key := func(k string, expires time.Time) string {
			v, err := db.Ent.IdempotencyKey.Create().SetTenantID(tn.ID).SetClientID("cli_x").SetKey(k).
				SetRequestHash("h").SetResponseStatus(201).SetResponseBody([]byte(`{}`)).SetExpiresAt(expires).Save(ctx)
			require.NoError(t, err)
			return v.ID
		}
		oldToken, liveToken := token("old", now.Add(-2*time.Hour)), token("live", now.Add(time.Minute))
		oldKey, liveKey := key("old", now.Add(-time.Second)), key("live", now.Add(time.Hour))

		w := &worker.PurgeExpiredWorker{App: &app.App{DB: db, Clock: func() time.Time { return now }}}
		require.NoError(t, w.Work(context.Background(), &river.Job[jobs.PurgeExpired]{}))

		tokens, err := db.Ent.ValidationToken.Query().IDs(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{liveToken}, tokens, "the expired token %s must go", oldToken)
		keys, err := db.Ent.IdempotencyKey.Query().IDs(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{liveKey}, keys, "the expired key %s must go", oldKey)
	})
}
