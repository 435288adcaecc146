package kernel

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/campaignrules"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/change"
	"github.com/fideliza/fideliza/ent/store"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// The read model: what the hot paths (authorize, validate, a sale's
// processing) keep in memory of each tenant: its live campaigns'
// definitions, its settings and its stores' groups. It is exact, not
// guessed at with a TTL: every write that changes one of these parts
// records a change in its own transaction (Changed), which drops that part
// of the tenant here as the transaction commits, and in every other process
// as it hears it (storage.ChangesChannel: PostgreSQL notifies it, on SQLite
// each process reads the new changes within a quarter of a second). While
// the listening connection is lost, nothing is kept (every read goes to the
// database) and everything kept before is dropped: what was notified
// meanwhile is lost.
// The amounts that move with every redemption (redemption counts, budgets
// spent) are not in it: campaignrules.Evaluate reads them where they
// are checked.

// tenantCache keeps one value per tenant in memory.
type tenantCache[T any] struct {
	mu       sync.Mutex
	byTenant map[string]T
	// generation counts a tenant's changes, and epoch the times every
	// tenant was dropped: a load that began before either must not store
	// what it read.
	generation map[string]uint64
	epoch      uint64
	// loads are the loads in flight that requests share (getShared).
	loads singleflight.Group
}

// version is what a load saw of its tenant's changes when it began.
type version struct{ epoch, generation uint64 }

func (c *tenantCache[T]) invalidate(tenantID string) {
	c.mu.Lock()
	delete(c.byTenant, tenantID)
	if c.generation == nil {
		c.generation = map[string]uint64{}
	}
	c.generation[tenantID]++
	c.mu.Unlock()
}

func (c *tenantCache[T]) invalidateAll() {
	c.mu.Lock()
	clear(c.byTenant)
	c.epoch++
	c.mu.Unlock()
}

// lookup returns the value kept of tenantID, or the version a load of it
// begins at.
func (c *tenantCache[T]) lookup(tenantID string) (T, version, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	value, ok := c.byTenant[tenantID]
	return value, version{c.epoch, c.generation[tenantID]}, ok
}

// store keeps value of tenantID, read by a load that began at v, unless
// the tenant changed since.
func (c *tenantCache[T]) store(tenantID string, v version, value T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != v.epoch || c.generation[tenantID] != v.generation {
		return
	}
	if c.byTenant == nil {
		c.byTenant = map[string]T{}
	}
	c.byTenant[tenantID] = value
}

// get returns the value of the viewer's tenant, loading it (and keeping it,
// while the change feed is heard) when it is not kept. It is keyed by the
// viewer's tenant, the one the privacy policy filters by.
func get[T any](ctx context.Context, k *Kernel, c *tenantCache[T], load func(context.Context) (T, error)) (T, error) {
	return getShared(ctx, k, c, false, load)
}

// getShared is get; when shared, the requests that find nothing kept at
// the same version of the tenant wait for one load (and the caller's
// cancellation does not end it) instead of each reading the same: after a
// change, every request in flight would. Only loads through the pool may be
// shared: a transaction waiting for a load that needs a connection could
// hold the last one.
func getShared[T any](ctx context.Context, k *Kernel, c *tenantCache[T], shared bool, load func(context.Context) (T, error)) (T, error) {
	var zero T
	v, _ := viewer.FromContext(ctx)
	if v.TenantID == "" {
		return zero, apperr.Forbidden("no_tenant", "read for one tenant only")
	}
	value, at, ok := c.lookup(v.TenantID)
	live := k.following()
	if ok && live {
		return value, nil
	}
	read := func(ctx context.Context) (T, error) {
		value, err := load(ctx)
		if err == nil && live {
			c.store(v.TenantID, at, value)
		}
		return value, err
	}
	if !shared {
		return read(ctx)
	}
	key := fmt.Sprintf("%s %d %d %v", v.TenantID, at.epoch, at.generation, live)
	loaded, err, _ := c.loads.Do(key, func() (any, error) { return read(context.WithoutCancel(ctx)) })
	if err != nil {
		return zero, err
	}
	return loaded.(T), nil
}

// changeFeed is how this process hears the change feed.
type changeFeed struct {
	once sync.Once
	// live says the feed is heard: while the listening (on SQLite,
	// watching) connection is open.
	live atomic.Bool
	// origin names this process's changes: it applies them at commit, and
	// ignores their notifications (which may come after it read them again).
	originOnce sync.Once
	origin     string
}

// origin is the name of this process's changes.
func (k *Kernel) origin() string {
	k.feed.originOnce.Do(func() { k.feed.origin = rand.Text() })
	return k.feed.origin
}

// following starts hearing the change feed on first use, and tells whether
// the read model may be trusted.
func (k *Kernel) following() bool {
	k.feed.once.Do(func() {
		s := &storage.Subscriber{Notified: k.notified, Listening: func(on bool) {
			if on {
				k.dropAll()
				k.feed.live.Store(true)
			} else {
				k.feed.live.Store(false)
				k.dropAll()
			}
		}}
		k.DB.Subscribe(context.Background(), storage.ChangesChannel, s) // heard on both databases
	})
	return k.feed.live.Load()
}

// notified applies a change another process committed: "<tenant id>
// <part> <origin>".
func (k *Kernel) notified(payload string) {
	tenantID, rest, _ := strings.Cut(payload, " ")
	part, origin, _ := strings.Cut(rest, " ")
	if origin != k.origin() {
		k.apply(tenantID, change.Part(part))
	}
}

// apply drops parts of a tenant's read model; an unknown part drops them
// all.
func (k *Kernel) apply(tenantID string, parts ...change.Part) {
	for _, p := range parts {
		switch p {
		case change.PartCampaigns:
			k.campaigns.invalidate(tenantID)
		case change.PartSettings:
			k.settings.invalidate(tenantID)
		case change.PartStores:
			k.storeGroups.invalidate(tenantID)
		default:
			k.campaigns.invalidate(tenantID)
			k.settings.invalidate(tenantID)
			k.storeGroups.invalidate(tenantID)
		}
	}
}

// dropAll forgets every tenant's read model.
func (k *Kernel) dropAll() {
	k.campaigns.invalidateAll()
	k.settings.invalidateAll()
	k.storeGroups.invalidateAll()
}

// Changed records in tx that parts of tenantID's read model change: every
// process drops them once tx commits (this one before InTx returns). Every
// write of a campaign's definition or status, a tenant's settings or its
// stores calls it in its transaction.
func (k *Kernel) Changed(ctx context.Context, tx storage.Tx, tenantID string, parts ...change.Part) error {
	now := k.Stamp()
	creates := make([]*ent.ChangeCreate, len(parts))
	for i, p := range parts {
		creates[i] = tx.Ent.Change.Create().SetTenantID(tenantID).SetPart(p).SetOrigin(k.origin()).SetCreatedAt(now)
	}
	if err := tx.Ent.Change.CreateBulk(creates...).Exec(ctx); err != nil {
		return err
	}
	tx.OnCommit(func() { k.apply(tenantID, parts...) })
	return nil
}

// ChangesKept is how long the change feed's records are kept: processes
// apply them as they commit, the records are for looking into.
const ChangesKept = 24 * time.Hour

// LiveCampaigns returns the live campaigns (not paused, not ended, not past
// their end) of the viewer's tenant, their definitions without their
// counters (campaignrules.Evaluate reads those), compiled once per change.
func (k *Kernel) LiveCampaigns(ctx context.Context) (*campaignrules.Live, error) {
	return getShared(ctx, k, &k.campaigns, true, func(ctx context.Context) (*campaignrules.Live, error) {
		return k.loadLiveCampaigns(ctx, k.DB.Ent)
	})
}

// LiveCampaignsIn is LiveCampaigns inside the transaction of c (a read on
// another connection could wait for a pool the concurrent transactions
// hold): what is kept, else read through c and kept. c's transaction must
// not have changed campaigns (it would keep what it has not committed).
func (k *Kernel) LiveCampaignsIn(ctx context.Context, c *ent.Client) (*campaignrules.Live, error) {
	return get(ctx, k, &k.campaigns, func(ctx context.Context) (*campaignrules.Live, error) {
		return k.loadLiveCampaigns(ctx, c)
	})
}

func (k *Kernel) loadLiveCampaigns(ctx context.Context, c *ent.Client) (*campaignrules.Live, error) {
	rows, err := c.Campaign.Query().
		Where(campaignrules.WhereLiveAt(k.Now().UTC())).
		Order(campaign.ByStartsAt(), campaign.ByID()).
		All(ctx)
	if err != nil {
		return nil, err
	}
	return campaignrules.LiveOf(campaignrules.DefinitionsOf(rows)), nil
}

// TenantSettings returns the viewer's tenant as kept: its loyalty and
// point-of-sale settings, never its customer count (read the tenant for
// that).
func (k *Kernel) TenantSettings(ctx context.Context) (*ent.Tenant, error) {
	return k.SettingsIn(ctx, k.DB.Ent)
}

// SettingsIn is TenantSettings inside the transaction of c, as
// LiveCampaignsIn: c's transaction must not have changed the settings.
func (k *Kernel) SettingsIn(ctx context.Context, c *ent.Client) (*ent.Tenant, error) {
	return get(ctx, k, &k.settings, func(ctx context.Context) (*ent.Tenant, error) {
		v, _ := viewer.FromContext(ctx)
		return c.Tenant.Get(ctx, v.TenantID)
	})
}

// SettingsOf is the settings of tenantID inside the transaction of c: as
// SettingsIn when it is the viewer's tenant, else read through c.
func (k *Kernel) SettingsOf(ctx context.Context, c *ent.Client, tenantID string) (*ent.Tenant, error) {
	if v, _ := viewer.FromContext(ctx); v.TenantID == tenantID {
		return k.SettingsIn(ctx, c)
	}
	return c.Tenant.Get(ctx, tenantID)
}

// StoreGroupsAt returns the groups (regions) of the viewer's tenant's store
// of code when one of campaigns targets stores, from a snapshot of the
// tenant's stores that have groups; nil otherwise, without reading.
func (k *Kernel) StoreGroupsAt(ctx context.Context, campaigns []eligibility.Campaign, code string) ([]string, error) {
	if code == "" || !eligibility.TargetsStores(campaigns) {
		return nil, nil
	}
	byCode, err := get(ctx, k, &k.storeGroups, func(ctx context.Context) (map[string][]string, error) {
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
