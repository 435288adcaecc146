package worker

import (
	"context"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/riverqueue/river"

	"github.com/fideliza/fideliza/ent/idempotencykey"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/ent/validationtoken"
	"github.com/fideliza/fideliza/storage"
)

// PurgeExpiredArgs deletes idempotency keys past their 24 hours and
// validation tokens past their five minutes that no redemption refers to.
type PurgeExpiredArgs struct{}

func (PurgeExpiredArgs) Kind() string { return "purge_expired" }

// PurgeExpiredWorker works PurgeExpiredArgs.
type PurgeExpiredWorker struct {
	river.WorkerDefaults[PurgeExpiredArgs]
	DB  *storage.DB
	Now func() time.Time
}

func (w *PurgeExpiredWorker) Work(ctx context.Context, _ *river.Job[PurgeExpiredArgs]) error {
	ctx = viewer.SystemContext(ctx)
	now := w.Now().UTC()
	if _, err := w.DB.Ent.IdempotencyKey.Delete().Where(idempotencykey.ExpiresAtLTE(now)).Exec(ctx); err != nil {
		return err
	}
	// Tokens a redemption refers to stay: the redemption's record of what
	// was validated.
	_, err := w.DB.Ent.ValidationToken.Delete().Where(
		validationtoken.ExpiresAtLTE(now.Add(-time.Hour)),
		func(s *sql.Selector) {
			r := sql.Table(redemption.Table)
			s.Where(sql.NotExists(sql.Select(r.C(redemption.FieldID)).From(r).
				Where(sql.ColumnsEQ(r.C(redemption.FieldValidationTokenID), s.C(validationtoken.FieldID)))))
		},
	).Exec(ctx)
	return err
}
