package worker_test

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/ent/store"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
	"github.com/fideliza/fideliza/worker"
)

// jobOf is a job of args as River hands it to its worker: its first
// attempt of River's default number.
func jobOf[T river.JobArgs](args T) *river.Job[T] {
	return &river.Job[T]{JobRow: &rivertype.JobRow{Kind: args.Kind(), Attempt: 1, MaxAttempts: river.MaxAttemptsDefault}, Args: args}
}

// storeCheckArgs is a job that reads the store its transaction wrote.
type storeCheckArgs struct {
	StoreID string `json:"store_id"`
}

func (storeCheckArgs) Kind() string { return "test_store_check" }

type storeCheckWorker struct {
	river.WorkerDefaults[storeCheckArgs]
	db   *storage.DB
	seen chan string
}

func (w *storeCheckWorker) Work(ctx context.Context, job *river.Job[storeCheckArgs]) error {
	s, err := w.db.Ent.Store.Get(viewer.SystemContext(ctx), job.Args.StoreID)
	if err != nil {
		return err
	}
	w.seen <- s.Code
	return nil
}

type bundle struct {
	db     *storage.DB
	client *river.Client[*sql.Tx]
	seen   chan string
	tenant string
}

func setup(t *testing.T, db *storage.DB) *bundle {
	t.Helper()
	seen := make(chan string, 1)
	workers := river.NewWorkers()
	river.AddWorker(workers, &storeCheckWorker{db: db, seen: seen})
	client, err := river.NewClient(db.RiverDriver(), &river.Config{
		Logger:            slog.New(slog.DiscardHandler),
		Workers:           workers,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
		FetchCooldown:     10 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
		TestOnly:          true,
	})
	require.NoError(t, err)
	ctx := viewer.SystemContext(context.Background())
	tn, err := db.Ent.Tenant.Create().SetName("Loja").Save(ctx)
	require.NoError(t, err)
	return &bundle{db: db, client: client, seen: seen, tenant: tn.ID}
}

func (b *bundle) countJobs(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, b.db.SQL.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'test_store_check'`).Scan(&n))
	return n
}

// TestInsertTxSharesTheEntTransaction: a job inserted with InsertTx in the
// transaction of an ent write lives and dies with that write.
func TestInsertTxSharesTheEntTransaction(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := viewer.SystemContext(context.Background())

		t.Run("rolled back: neither row nor job", func(t *testing.T) {
			b := setup(t, db)
			errAbort := errors.New("abort")
			err := db.InTx(ctx, func(tx storage.Tx) error {
				s, err := tx.Ent.Store.Create().SetTenantID(b.tenant).SetCode("ROLLBACK").SetName("Gone").Save(ctx)
				require.NoError(t, err)
				_, err = b.client.InsertTx(ctx, tx.SQL, storeCheckArgs{StoreID: s.ID}, nil)
				require.NoError(t, err)
				return errAbort
			})
			require.ErrorIs(t, err, errAbort)
			exists, err := db.Ent.Store.Query().Where(store.Code("ROLLBACK")).Exist(ctx)
			require.NoError(t, err)
			require.False(t, exists, "the store must be rolled back")
			require.Zero(t, b.countJobs(t), "the job must be rolled back")
		})

		t.Run("committed: row and job, and the job runs", func(t *testing.T) {
			b := setup(t, db)
			err := db.InTx(ctx, func(tx storage.Tx) error {
				s, err := tx.Ent.Store.Create().SetTenantID(b.tenant).SetCode("COMMIT").SetName("Kept").Save(ctx)
				if err != nil {
					return err
				}
				_, err = b.client.InsertTx(ctx, tx.SQL, storeCheckArgs{StoreID: s.ID}, nil)
				return err
			})
			require.NoError(t, err)
			exists, err := db.Ent.Store.Query().Where(store.Code("COMMIT")).Exist(ctx)
			require.NoError(t, err)
			require.True(t, exists)
			require.Equal(t, 1, b.countJobs(t))

			require.NoError(t, b.client.Start(ctx))
			t.Cleanup(func() { _ = b.client.Stop(context.Background()) })
			select {
			case code := <-b.seen:
				require.Equal(t, "COMMIT", code, "the job sees the row committed with it")
			case <-time.After(15 * time.Second):
				t.Fatal("the job did not run")
			}
		})
	})
}

// TestPlatformClientStarts checks the production client configuration works
// jobs on both databases.
func TestPlatformClientStarts(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		client, err := worker.NewClient(app.New(&app.Config{DB: db, Log: slog.New(slog.DiscardHandler)}), worker.Config{Work: true, MaxWorkers: 2})
		require.NoError(t, err)
		events, cancel := client.Subscribe(river.EventKindJobCompleted)
		defer cancel()
		require.NoError(t, client.Start(ctx))
		defer client.Stop(ctx)
		_, err = client.Insert(ctx, jobs.PruneSigningKeys{}, nil)
		require.NoError(t, err)
		select {
		case ev := <-events:
			require.Equal(t, jobs.PruneSigningKeys{}.Kind(), ev.Job.Kind)
		case <-time.After(15 * time.Second):
			t.Fatal("the job did not complete")
		}
	})
}

// TestWorkerHearsNewJobs: on PostgreSQL a worker is told of a job as the
// transaction that inserted it (through the application's database/sql
// client, in ent's transaction) commits. Its polling is an hour apart, so
// a job worked at all was heard: the second job comes after the start's
// fetch and the first job's completion, which fetch nothing more.
func TestWorkerHearsNewJobs(t *testing.T) {
	t.Parallel()
	if !slices.Contains(storagetest.Dialects(), dialect.Postgres) {
		t.Skip("PostgreSQL only (SQLite has no LISTEN): set " + storagetest.EnvPostgres)
	}
	db := storagetest.Open(t, dialect.Postgres)
	ctx := context.Background()
	a := app.New(&app.Config{DB: db, Log: slog.New(slog.DiscardHandler)})
	client, err := worker.NewClient(a, worker.Config{Work: true, MaxWorkers: 2, PollInterval: time.Hour})
	require.NoError(t, err)
	events, cancel := client.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	require.NoError(t, client.Start(ctx))
	defer client.Stop(ctx)
	for range 2 {
		var id int64
		require.NoError(t, db.InTx(ctx, func(tx storage.Tx) error {
			res, err := a.River.InsertTx(ctx, tx.SQL, jobs.PruneSigningKeys{}, nil)
			if err == nil {
				id = res.Job.ID
			}
			return err
		}))
		select {
		case ev := <-events:
			require.Equal(t, id, ev.Job.ID)
		case <-time.After(30 * time.Second):
			t.Fatal("the worker did not hear of the job")
		}
	}
}
