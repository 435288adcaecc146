package kernel

import (
	"context"
	"sync"
	"time"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/campaignrules"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/ent/store"
)

// tenantCacheTTL bounds how stale another process's change can be here:
// changes made in this process invalidate at once.
const tenantCacheTTL = 5 * time.Second

// tenantCache keeps one value per tenant in memory (its live campaigns, its
// settings), so the point-of-sale and checkout paths do not read them on
// every request.
type tenantCache[T any] struct {
	mu       sync.Mutex
	byTenant map[string]cached[T]
	// generation counts a tenant's invalidations: a load that began before
	// one must not store what it read.
	generation map[string]uint64
}

type cached[T any] struct {
	loaded time.Time
	value  T
}

func (c *tenantCache[T]) invalidate(tenantID string) {
	c.mu.Lock()
	delete(c.byTenant, tenantID)
	if c.generation == nil {
		c.generation = map[string]uint64{}
	}
	c.generation[tenantID]++
	c.mu.Unlock()
}

// fresh returns the value of the viewer's tenant when one younger than the
// TTL is kept, without loading: for reads inside a transaction, which must
// not wait for another connection of the pool.
func (c *tenantCache[T]) fresh(ctx context.Context) (T, bool) {
	var zero T
	v, _ := viewer.FromContext(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if hit, ok := c.byTenant[v.TenantID]; ok && v.TenantID != "" && time.Since(hit.loaded) < tenantCacheTTL {
		return hit.value, true
	}
	return zero, false
}

// get returns the value of the viewer's tenant, loading it when it is
// missing or older than the TTL. It is keyed by the viewer's tenant, the
// one the privacy policy filters by.
func (c *tenantCache[T]) get(ctx context.Context, load func(context.Context) (T, error)) (T, error) {
	var zero T
	v, _ := viewer.FromContext(ctx)
	if v.TenantID == "" {
		return zero, apperr.Forbidden("no_tenant", "read for one tenant only")
	}
	c.mu.Lock()
	hit, ok := c.byTenant[v.TenantID]
	gen := c.generation[v.TenantID]
	c.mu.Unlock()
	if ok && time.Since(hit.loaded) < tenantCacheTTL {
		return hit.value, nil
	}
	loaded := time.Now()
	value, err := load(ctx)
	if err != nil {
		return zero, err
	}
	c.mu.Lock()
	if c.byTenant == nil {
		c.byTenant = map[string]cached[T]{}
	}
	if c.generation[v.TenantID] == gen {
		c.byTenant[v.TenantID] = cached[T]{loaded: loaded, value: value}
	}
	c.mu.Unlock()
	return value, nil
}

// LiveCampaigns returns the live campaigns (not paused, not ended, not past
// their end) of the viewer's tenant. Redemption counts in them may lag:
// redeem enforces the limits in the database.
func (k *Kernel) LiveCampaigns(ctx context.Context) ([]eligibility.Campaign, error) {
	return k.campaigns.get(ctx, func(ctx context.Context) ([]eligibility.Campaign, error) {
		return k.loadLiveCampaigns(ctx, k.DB.Ent)
	})
}

// LiveCampaignsIn is LiveCampaigns inside the transaction of c: the cached
// campaigns when they are fresh, else read through c (a read on another
// connection could wait for a pool the concurrent transactions hold).
func (k *Kernel) LiveCampaignsIn(ctx context.Context, c *ent.Client) ([]eligibility.Campaign, error) {
	if live, ok := k.campaigns.fresh(ctx); ok {
		return live, nil
	}
	return k.loadLiveCampaigns(ctx, c)
}

func (k *Kernel) loadLiveCampaigns(ctx context.Context, c *ent.Client) ([]eligibility.Campaign, error) {
	rows, err := c.Campaign.Query().
		Where(campaignrules.WhereLiveAt(k.Now().UTC())).
		Order(campaign.ByStartsAt(), campaign.ByID()).
		All(ctx)
	if err != nil {
		return nil, err
	}
	return campaignrules.OfAll(rows), nil
}

// TenantSettings returns the viewer's tenant as cached: its loyalty and
// point-of-sale settings, never its customer count (read the tenant for
// that).
func (k *Kernel) TenantSettings(ctx context.Context) (*ent.Tenant, error) {
	return k.settings.get(ctx, func(ctx context.Context) (*ent.Tenant, error) {
		v, _ := viewer.FromContext(ctx)
		return k.DB.Ent.Tenant.Get(ctx, v.TenantID)
	})
}

// StoreGroupsAt returns the groups (regions) of the viewer's tenant's store
// of code when one of campaigns targets stores, from a snapshot of the
// tenant's stores that have groups; nil otherwise, without reading.
func (k *Kernel) StoreGroupsAt(ctx context.Context, campaigns []eligibility.Campaign, code string) ([]string, error) {
	if code == "" || !eligibility.TargetsStores(campaigns) {
		return nil, nil
	}
	byCode, err := k.storeGroups.get(ctx, func(ctx context.Context) (map[string][]string, error) {
		rows, err := k.DB.Ent.Store.Query().Where(store.GroupsNotNil()).Select(store.FieldCode, store.FieldGroups).All(ctx)
		if err != nil {
			return nil, err
		}
		byCode := make(map[string][]string, len(rows))
		for _, s := range rows {
			byCode[s.Code] = s.Groups
		}
		return byCode, nil
	})
	return byCode[code], err
}

// CampaignsChanged forgets the live campaigns of a tenant kept in memory,
// after they changed.
func (k *Kernel) CampaignsChanged(tenantID string) { k.campaigns.invalidate(tenantID) }

// SettingsChanged forgets the settings of a tenant kept in memory.
func (k *Kernel) SettingsChanged(tenantID string) { k.settings.invalidate(tenantID) }

// StoreGroupsChanged forgets the store groups of a tenant kept in memory.
func (k *Kernel) StoreGroupsChanged(tenantID string) { k.storeGroups.invalidate(tenantID) }

// FreshSettings returns the viewer's tenant's settings when a fresh copy is
// kept, without reading (for reads inside a transaction).
func (k *Kernel) FreshSettings(ctx context.Context) (*ent.Tenant, bool) { return k.settings.fresh(ctx) }

// ViewerTenant reads the tenant of the request's viewer.
func (k *Kernel) ViewerTenant(ctx context.Context) (*ent.Tenant, error) {
	v, _ := viewer.FromContext(ctx)
	return k.DB.Ent.Tenant.Get(ctx, v.TenantID)
}

// TenantZone is the time zone of the viewer's tenant's programme.
func (k *Kernel) TenantZone(ctx context.Context) (*time.Location, error) {
	t, err := k.TenantSettings(ctx)
	if err != nil {
		return nil, err
	}
	return points.Zone(t.TimeZone)
}
