package campaignrules

import (
	"time"

	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/predicate"
)

// StatusAt is a stored campaign's status at instant t: the one reading of
// eligibility.EffectiveStatus for stored campaigns, so a status shown is
// never the lifecycle job's stale one.
func StatusAt(c *ent.Campaign, t time.Time) campaign.Status {
	return campaign.Status(eligibility.EffectiveStatus(Of(c), t))
}

// WhereStatusAt matches the campaigns whose StatusAt(t) is s: the same rule
// as a query, for lists and conditional updates.
func WhereStatusAt(s campaign.Status, t time.Time) predicate.Campaign {
	live := campaign.StatusNotIn(campaign.StatusPaused, campaign.StatusEnded)
	switch s {
	case campaign.StatusActive:
		return campaign.And(live, campaign.StartsAtLTE(t), campaign.EndsAtGT(t))
	case campaign.StatusScheduled:
		return campaign.And(live, campaign.StartsAtGT(t), campaign.EndsAtGT(t))
	case campaign.StatusPaused:
		return campaign.And(campaign.StatusEQ(campaign.StatusPaused), campaign.EndsAtGT(t))
	default:
		return campaign.Or(campaign.StatusEQ(campaign.StatusEnded), campaign.EndsAtLTE(t))
	}
}

// WhereLiveAt matches the campaigns still to run or running at t (neither
// paused nor ended): the ones the engine considers.
func WhereLiveAt(t time.Time) predicate.Campaign {
	return campaign.Or(WhereStatusAt(campaign.StatusActive, t), WhereStatusAt(campaign.StatusScheduled, t))
}
