package campaigns

import (
	"context"
	"fmt"
	"time"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/campaignrules"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/change"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// RunCampaignLifecycle stores campaigns' statuses as their dates pass
// (scheduled → active → ended), recording campaign.activated when one
// starts. Reads compute the status from the dates anyway; this makes it
// stored and emits the event.
func (a *Service) RunCampaignLifecycle(ctx context.Context, _ jobs.CampaignLifecycle) error {
	if err := Rules.RunCampaignLifecycle.Allow(ctx); err != nil {
		return err
	}
	now := a.k.Stamp()
	sys := viewer.SystemContext(ctx)
	// Ended first: a campaign whose whole window passed unseen ends
	// without being announced.
	err := a.k.DB.InTx(sys, func(tx storage.Tx) error {
		ending := []predicate.Campaign{campaign.StatusNEQ(campaign.StatusEnded), campaignrules.WhereStatusAt(campaign.StatusEnded, now)}
		tenants, err := tx.Ent.Campaign.Query().Where(ending...).Unique(true).Select(campaign.FieldTenantID).Strings(sys)
		if err != nil {
			return err
		}
		if _, err := tx.Ent.Campaign.Update().Where(ending...).SetStatus(campaign.StatusEnded).Save(sys); err != nil {
			return err
		}
		for _, t := range tenants {
			if err := a.k.Changed(sys, tx, t, change.PartCampaigns); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	due, err := a.k.DB.Ent.Campaign.Query().
		Where(campaign.StatusEQ(campaign.StatusScheduled), campaignrules.WhereStatusAt(campaign.StatusActive, now)).
		Order(ent.Asc(campaign.FieldStartsAt)).Limit(kernel.UpkeepBatch).
		All(sys)
	if err != nil {
		return err
	}
	for _, c := range due {
		tctx := viewer.TenantContext(ctx, c.TenantID)
		err := a.k.DB.InTx(tctx, func(tx storage.Tx) error {
			// The conditional update claims the activation: a concurrent run
			// finds the campaign active and records nothing.
			n, err := tx.Ent.Campaign.Update().
				Where(campaign.ID(c.ID), campaign.StatusEQ(campaign.StatusScheduled)).
				SetStatus(campaign.StatusActive).Save(tctx)
			if err != nil || n == 0 {
				return err
			}
			if err := a.k.Changed(tctx, tx, c.TenantID, change.PartCampaigns); err != nil {
				return err
			}
			data := map[string]any{
				"campaign_id": c.ID, "name": c.Name, "type": string(c.Type),
				"starts_at": c.StartsAt.UTC().Format(time.RFC3339Nano), "ends_at": c.EndsAt.UTC().Format(time.RFC3339Nano),
				"segment_id": c.SegmentID, "channels": c.Channels,
			}
			return outbox.Record(tctx, tx.Ent, now, c.TenantID, outbox.CampaignActivated, c.ID, data)
		})
		if err != nil {
			return fmt.Errorf("activating campaign %s: %w", c.ID, err)
		}
	}
	return nil
}
