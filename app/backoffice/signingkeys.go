package backoffice

import (
	"context"
	"time"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent/signingkey"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/viewer"
)

// RetiredKeyKeep is how long a retired signing key is kept after it stopped
// signing: longer than any token it signed lives, so they all verify.
const RetiredKeyKeep = auth.LongestTokenLifetime + time.Hour

// PruneSigningKeys deletes signing keys retired long enough ago that no
// live token was signed with them.
func (a *Service) PruneSigningKeys(ctx context.Context, _ jobs.PruneSigningKeys) error {
	if err := Rules.PruneSigningKeys.Allow(ctx); err != nil {
		return err
	}
	_, err := a.k.DB.Ent.SigningKey.Delete().
		Where(signingkey.RetiredAtLT(a.k.Now().Add(-RetiredKeyKeep))).
		Exec(viewer.SystemContext(ctx))
	return err
}
