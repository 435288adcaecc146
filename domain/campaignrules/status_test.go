package campaignrules_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/campaignrules"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestWhereStatusAtAgreesWithStatusAt: the query form of "status at an
// instant" matches exactly the campaigns the Go form gives that status, for
// every stored status, around both ends of the window.
func TestWhereStatusAtAgreesWithStatusAt(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		sys := viewer.SystemContext(context.Background())
		tn, err := db.Ent.Tenant.Create().SetName("Status").Save(sys)
		require.NoError(t, err)
		ctx := viewer.TenantContext(context.Background(), tn.ID)
		start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		end := start.Add(48 * time.Hour)
		statuses := []campaign.Status{campaign.StatusScheduled, campaign.StatusActive, campaign.StatusPaused, campaign.StatusEnded}
		for _, st := range statuses {
			_, err := db.Ent.Campaign.Create().SetName(string(st)).SetType(campaign.TypeDiscount).
				SetStatus(st).SetStartsAt(start).SetEndsAt(end).Save(ctx)
			require.NoError(t, err)
		}
		all, err := db.Ent.Campaign.Query().All(ctx)
		require.NoError(t, err)
		instants := []time.Time{start.Add(-time.Second), start, start.Add(time.Hour), end.Add(-time.Microsecond), end, end.Add(time.Hour)}
		for _, at := range instants {
			for _, s := range statuses {
				want := map[string]bool{}
				for _, c := range all {
					if campaignrules.StatusAt(c, at) == s {
						want[c.ID] = true
					}
				}
				ids, err := db.Ent.Campaign.Query().Where(campaignrules.WhereStatusAt(s, at)).IDs(ctx)
				require.NoError(t, err)
				got := map[string]bool{}
				for _, id := range ids {
					got[id] = true
				}
				require.Equal(t, want, got, "status %s at %s", s, at)
			}
		}
	})
}
