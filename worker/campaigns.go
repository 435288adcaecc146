package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/storage"
)

// CampaignLifecycleArgs moves campaigns scheduled → active → ended as their
// dates pass, recording campaign.activated when one starts. Reads compute
// the status from the dates anyway; this job makes it stored and emits the
// event.
type CampaignLifecycleArgs struct{}

func (CampaignLifecycleArgs) Kind() string { return "campaign_lifecycle" }

// CampaignLifecycleWorker works CampaignLifecycleArgs.
type CampaignLifecycleWorker struct {
	river.WorkerDefaults[CampaignLifecycleArgs]
	DB  *storage.DB
	Now func() time.Time
}

func (w *CampaignLifecycleWorker) Work(ctx context.Context, _ *river.Job[CampaignLifecycleArgs]) error {
	now := w.Now().UTC().Truncate(time.Microsecond)
	sys := viewer.SystemContext(ctx)
	// Ended first: a campaign whose whole window passed unseen ends
	// without being announced.
	if _, err := w.DB.Ent.Campaign.Update().
		Where(campaign.StatusIn(campaign.StatusScheduled, campaign.StatusActive, campaign.StatusPaused), campaign.EndsAtLTE(now)).
		SetStatus(campaign.StatusEnded).Save(sys); err != nil {
		return err
	}
	due, err := w.DB.Ent.Campaign.Query().
		Where(campaign.StatusEQ(campaign.StatusScheduled), campaign.StartsAtLTE(now), campaign.EndsAtGT(now)).
		Order(ent.Asc(campaign.FieldStartsAt)).Limit(pointsBatch).
		All(sys)
	if err != nil {
		return err
	}
	for _, c := range due {
		tctx := viewer.TenantContext(ctx, c.TenantID)
		err := w.DB.InTx(tctx, func(tx storage.Tx) error {
			// The conditional update claims the activation: a concurrent run
			// finds the campaign active and records nothing.
			n, err := tx.Ent.Campaign.Update().
				Where(campaign.ID(c.ID), campaign.StatusEQ(campaign.StatusScheduled)).
				SetStatus(campaign.StatusActive).Save(tctx)
			if err != nil || n == 0 {
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
