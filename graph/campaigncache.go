package graph

import (
	"context"
	"sync"
	"time"

	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/graph/apperr"
	"github.com/fideliza/fideliza/graph/campaignrules"
	"github.com/fideliza/fideliza/graph/eligibility"
)

// campaignCacheTTL bounds how stale another process's campaign change can
// be here: changes made in this process invalidate at once.
const campaignCacheTTL = 5 * time.Second

// campaignCache keeps each tenant's live campaigns (not paused, not ended,
// not past their end) in memory, so validate does not read every campaign
// on every checkout. Redemption counts in it may lag: redeem enforces the
// limits in the database.
type campaignCache struct {
	mu       sync.Mutex
	byTenant map[string]cachedCampaigns
	// generation counts a tenant's invalidations: a load that began before
	// one must not store what it read.
	generation map[string]uint64
}

type cachedCampaigns struct {
	loaded time.Time
	list   []eligibility.Campaign
}

func (c *campaignCache) invalidate(tenantID string) {
	c.mu.Lock()
	delete(c.byTenant, tenantID)
	if c.generation == nil {
		c.generation = map[string]uint64{}
	}
	c.generation[tenantID]++
	c.mu.Unlock()
}

// liveCampaigns returns the live campaigns of the viewer's tenant, loading
// them when the cached list is missing or older than the TTL. The cache is
// keyed by the viewer's tenant, the one the privacy policy filters by.
func (a *App) liveCampaigns(ctx context.Context) ([]eligibility.Campaign, error) {
	v, _ := viewer.FromContext(ctx)
	if v.TenantID == "" {
		return nil, apperr.Forbidden("no_tenant", "campaigns are read for one tenant")
	}
	tenantID := v.TenantID
	c := &a.campaigns
	c.mu.Lock()
	cached, ok := c.byTenant[tenantID]
	gen := c.generation[tenantID]
	c.mu.Unlock()
	if ok && time.Since(cached.loaded) < campaignCacheTTL {
		return cached.list, nil
	}
	loaded := time.Now()
	rows, err := a.DB.Ent.Campaign.Query().
		Where(campaign.StatusNotIn(campaign.StatusPaused, campaign.StatusEnded), campaign.EndsAtGT(a.now().UTC())).
		Order(campaign.ByStartsAt(), campaign.ByID()).
		All(ctx)
	if err != nil {
		return nil, err
	}
	list := make([]eligibility.Campaign, len(rows))
	for i, r := range rows {
		list[i] = campaignrules.Of(r)
	}
	c.mu.Lock()
	if c.byTenant == nil {
		c.byTenant = map[string]cachedCampaigns{}
	}
	if c.generation[tenantID] == gen {
		c.byTenant[tenantID] = cachedCampaigns{loaded: loaded, list: list}
	}
	c.mu.Unlock()
	return list, nil
}
