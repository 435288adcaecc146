package worker

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/ent/signingkey"
	"github.com/fideliza/fideliza/storage"
)

// RetiredKeyKeep is how long a retired signing key is kept after it stopped
// signing: longer than any token it signed lives, so they all verify.
const RetiredKeyKeep = auth.LongestTokenLifetime + time.Hour

// PruneSigningKeysArgs deletes signing keys retired long enough ago that no
// live token was signed with them.
type PruneSigningKeysArgs struct{}

func (PruneSigningKeysArgs) Kind() string { return "prune_signing_keys" }

// PruneSigningKeysWorker works PruneSigningKeysArgs.
type PruneSigningKeysWorker struct {
	river.WorkerDefaults[PruneSigningKeysArgs]
	DB *storage.DB
}

func (w *PruneSigningKeysWorker) Work(ctx context.Context, _ *river.Job[PruneSigningKeysArgs]) error {
	_, err := w.DB.Ent.SigningKey.Delete().
		Where(signingkey.RetiredAtLT(time.Now().Add(-RetiredKeyKeep))).
		Exec(viewer.SystemContext(ctx))
	return err
}
