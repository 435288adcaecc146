package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// TestCampaignStatusRightAfterStart: campaigns whose dates passed while no
// process ran (stored as the lifecycle job last saw them) are found by
// GraphQL's status filter under their status of now from the first request
// after serve starts, a minute before the job's first run (--no-worker
// leaves the start alone to do it); a query asking for the status without
// the dates gets it right too.
func TestCampaignStatusRightAfterStart(t *testing.T) {
	t.Parallel()
	withCLITenant(t, "Restart", func(t *testing.T, u, tenantID string, logs *syncBuffer) {
		ctx := viewer.SystemContext(context.Background())
		db, err := storage.Open(ctx, u)
		require.NoError(t, err)
		now := time.Now().UTC()
		day := 24 * time.Hour
		for _, c := range []struct {
			name         string
			stored       campaign.Status
			starts, ends time.Time
		}{
			{"Ended yesterday", campaign.StatusActive, now.Add(-10 * day), now.Add(-day)},
			{"Started an hour ago", campaign.StatusScheduled, now.Add(-time.Hour), now.Add(10 * day)},
			{"Never started", campaign.StatusScheduled, now.Add(-10 * day), now.Add(-day)},
		} {
			require.NoError(t, db.Ent.Campaign.Create().SetTenantID(tenantID).SetName(c.name).
				SetType(campaign.TypeBonusPoints).SetMultiplier(decimal.NewFromInt(2)).
				SetStatus(c.stored).SetStartsAt(c.starts).SetEndsAt(c.ends).Exec(ctx))
		}
		require.NoError(t, db.Close())

		base, _ := startServe(t, logs, u, "--no-worker")
		token := fideliza(t, logs, u, "--public-url", base, "user", "token", "--tenant", tenantID,
			"--role", "analyst")["access_token"].(string)
		for _, tc := range []struct {
			status string
			want   []string
		}{
			{"ended", []string{"Ended yesterday", "Never started"}},
			{"active", []string{"Started an hour ago"}},
			{"scheduled", nil},
		} {
			status, want := tc.status, tc.want
			var got struct {
				Campaigns struct {
					Edges []struct{ Node struct{ Name, Status string } }
				}
			}
			graphQL(t, base, token, `query($s: CampaignStatus!) {
				campaigns(where: {status: $s}, orderBy: {field: NAME}) { edges { node { name status } } }
			}`, map[string]any{"s": status}, &got)
			var names []string
			for _, e := range got.Campaigns.Edges {
				require.Equal(t, status, e.Node.Status, "%s is found among the %s campaigns", e.Node.Name, status)
				names = append(names, e.Node.Name)
			}
			slices.Sort(names)
			require.Equal(t, want, names, "the %s campaigns", status)
		}
	})
}
