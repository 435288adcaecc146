package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/ent/customerimport"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
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
		token := func(expires time.Time) string {
			v, err := db.Ent.ValidationToken.Create().SetTenantID(tn.ID).SetCustomerID(cu.ID).
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
		imp := func(status customerimport.Status, created time.Time, finished *time.Time) string {
			m := db.Ent.CustomerImport.Create().SetTenantID(tn.ID).SetFormat(customerimport.FormatCsv).
				SetStatus(status).SetCreatedAt(created).SetNillableFinishedAt(finished)
			v, err := m.Save(ctx)
			require.NoError(t, err)
			require.NoError(t, db.Ent.CustomerImportChunk.Create().SetTenantID(tn.ID).SetImportID(v.ID).SetSeq(0).
				SetData([]byte("name,email,cpf\n")).Exec(ctx))
			require.NoError(t, db.Ent.CustomerImportProblem.Create().SetTenantID(tn.ID).SetImportID(v.ID).SetLine(2).
				SetMessage("is required").Exec(ctx))
			return v.ID
		}
		abandoned := imp(customerimport.StatusUploading, now.Add(-25*time.Hour), nil)
		uploading := imp(customerimport.StatusUploading, now.Add(-time.Hour), nil)
		queued := imp(customerimport.StatusQueued, now.Add(-30*24*time.Hour), nil)
		oldDone := imp(customerimport.StatusSucceeded, now.Add(-100*24*time.Hour), new(now.Add(-91*24*time.Hour)))
		recentDone := imp(customerimport.StatusFailed, now.Add(-10*24*time.Hour), new(now.Add(-10*24*time.Hour)))
		oldToken, liveToken := token(now.Add(-2*time.Hour)), token(now.Add(time.Minute))
		oldKey, liveKey := key("old", now.Add(-time.Second)), key("live", now.Add(time.Hour))

		w := worker.For[jobs.PurgeExpired](app.New(&app.Config{DB: db, Clock: func() time.Time { return now }}))
		require.NoError(t, w.Work(context.Background(), jobOf(jobs.PurgeExpired{})))

		tokens, err := db.Ent.ValidationToken.Query().IDs(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{liveToken}, tokens, "the expired token %s must go", oldToken)
		keys, err := db.Ent.IdempotencyKey.Query().IDs(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{liveKey}, keys, "the expired key %s must go", oldKey)
		imports, err := db.Ent.CustomerImport.Query().IDs(ctx)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{uploading, queued, recentDone}, imports,
			"the upload abandoned a day ago (%s) and the import finished 91 days ago (%s) go", abandoned, oldDone)
		for _, q := range []interface {
			Count(context.Context) (int, error)
		}{db.Ent.CustomerImportChunk.Query(), db.Ent.CustomerImportProblem.Query()} {
			n, err := q.Count(ctx)
			require.NoError(t, err)
			require.Equal(t, 3, n, "their chunks and refused rows go with them")
		}
	})
}
