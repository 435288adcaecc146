package worker_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
	"github.com/fideliza/fideliza/worker"
)

// The tests of the campaign jobs: the lifecycle job on a controllable
// clock, and the cashback job the redeem inserts in its transaction.
// Helpers are prefixed camp.

type campBundle struct {
	db        *storage.DB
	app       *app.App
	clock     *testclock.Clock
	ctx       context.Context // the tenant's
	tenant    string
	lifecycle river.Worker[jobs.CampaignLifecycle]
	cashback  river.Worker[jobs.CreditCashback]
}

func campSetup(t *testing.T, db *storage.DB, start time.Time) *campBundle {
	t.Helper()
	clock := testclock.New(start)
	env := apptest.New(t, db, apptest.WithClock(clock.Now))
	return &campBundle{
		db: db, app: env.App, clock: clock, ctx: env.Ctx, tenant: env.TenantID,
		lifecycle: worker.For[jobs.CampaignLifecycle](apptest.Process(env.App)),
		cashback:  worker.For[jobs.CreditCashback](apptest.Process(env.App)),
	}
}

// campaign creates a campaign of the bundle's tenant between the times.
func (b *campBundle) campaign(ctx context.Context, t *testing.T, name, typ string, starts, ends time.Time, d *campaigns.DiscountInput) *ent.Campaign {
	t.Helper()
	if d == nil {
		d = &campaigns.DiscountInput{GiftSKU: opt.Of("BRINDE").Ptr()}
	}
	c, err := b.app.Campaigns.CreateCampaign(ctx, campaigns.CampaignInput{Name: name, Type: typ, StartsAt: &starts, EndsAt: &ends, Discount: d})
	require.NoError(t, err)
	return c
}

func (b *campBundle) runLifecycle(t *testing.T) {
	t.Helper()
	require.NoError(t, b.lifecycle.Work(context.Background(), jobOf(jobs.CampaignLifecycle{})))
}

// stored is the status the database holds (reads compute it from the dates).
func (b *campBundle) stored(t *testing.T, id string) campaign.Status {
	t.Helper()
	c, err := b.db.Ent.Campaign.Get(viewer.SystemContext(context.Background()), id)
	require.NoError(t, err)
	return c.Status
}

// activations returns the campaign.activated events of a campaign.
func (b *campBundle) activations(t *testing.T, id string) []*ent.Event {
	t.Helper()
	evs, err := b.db.Ent.Event.Query().Where(event.Type(outbox.CampaignActivated), event.SubjectID(id)).
		All(viewer.SystemContext(context.Background()))
	require.NoError(t, err)
	return evs
}

func TestCampaignLifecycle(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t0 := time.Date(2026, 5, 4, 15, 0, 0, 0, time.UTC)
		b := campSetup(t, db, t0)
		seg, err := b.db.Ent.Segment.Create().SetName("vip").Save(b.ctx)
		require.NoError(t, err)
		starts, ends := t0.Add(time.Hour), t0.Add(3*time.Hour)
		c, err := b.app.Campaigns.CreateCampaign(b.ctx, campaigns.CampaignInput{
			Name: "Semana VIP", Type: "discount", StartsAt: &starts, EndsAt: &ends, SegmentID: &seg.ID,
			Channels: []string{"pdv", "app"}, Discount: &campaigns.DiscountInput{Mode: "percentage", Value: decimalPtr("10")},
		})
		require.NoError(t, err)
		require.Equal(t, campaign.StatusScheduled, c.Status)
		short := b.campaign(b.ctx, t, "Curta", "gift", t0.Add(time.Hour), t0.Add(2*time.Hour), nil)
		pausedLater := b.campaign(b.ctx, t, "Pausada antes de começar", "gift", t0.Add(time.Hour), t0.Add(10*time.Hour), nil)
		_, err = b.app.Campaigns.PauseCampaign(b.ctx, pausedLater.ID)
		require.NoError(t, err)

		// Before its start nothing moves.
		b.clock.Set(starts.Add(-time.Microsecond))
		b.runLifecycle(t)
		require.Equal(t, campaign.StatusScheduled, b.stored(t, c.ID))
		require.Empty(t, b.activations(t, c.ID))

		// At its start it becomes active, announced once.
		b.clock.Set(starts)
		b.runLifecycle(t)
		require.Equal(t, campaign.StatusActive, b.stored(t, c.ID))
		evs := b.activations(t, c.ID)
		require.Len(t, evs, 1)
		ev := evs[0]
		require.Equal(t, b.tenant, ev.TenantID)
		require.True(t, ev.CreatedAt.Equal(starts), "recorded at the job's time: %s", ev.CreatedAt)
		require.Nil(t, ev.PublishedAt)
		require.Equal(t, c.ID, ev.Data["campaign_id"])
		require.Equal(t, "Semana VIP", ev.Data["name"])
		require.Equal(t, "discount", ev.Data["type"])
		require.Equal(t, seg.ID, ev.Data["segment_id"])
		require.Equal(t, []any{"pdv", "app"}, ev.Data["channels"])
		require.Equal(t, starts.Format(time.RFC3339Nano), ev.Data["starts_at"])
		require.Equal(t, ends.Format(time.RFC3339Nano), ev.Data["ends_at"])

		// Running again, or many at once, records nothing more.
		b.runLifecycle(t)
		errs := make(chan error, 5)
		for range 5 {
			go func() { errs <- b.lifecycle.Work(context.Background(), jobOf(jobs.CampaignLifecycle{})) }()
		}
		for range 5 {
			require.NoError(t, <-errs)
		}
		require.Len(t, b.activations(t, c.ID), 1)
		require.Equal(t, campaign.StatusActive, b.stored(t, short.ID))
		require.Len(t, b.activations(t, short.ID), 1)
		require.Equal(t, campaign.StatusPaused, b.stored(t, pausedLater.ID), "a pause holds past the start")
		require.Empty(t, b.activations(t, pausedLater.ID))

		// At its end it ends.
		b.clock.Set(ends.Add(-time.Microsecond))
		b.runLifecycle(t)
		require.Equal(t, campaign.StatusActive, b.stored(t, c.ID))
		b.clock.Set(ends)
		b.runLifecycle(t)
		require.Equal(t, campaign.StatusEnded, b.stored(t, c.ID))
		require.Equal(t, campaign.StatusEnded, b.stored(t, short.ID))
		require.Len(t, b.activations(t, c.ID), 1)

		// A paused campaign ends at its end too.
		b.clock.Set(t0.Add(10 * time.Hour))
		b.runLifecycle(t)
		require.Equal(t, campaign.StatusEnded, b.stored(t, pausedLater.ID))
		require.Empty(t, b.activations(t, pausedLater.ID))
		n, err := b.db.Ent.Event.Query().Where(event.Type(outbox.CampaignActivated)).Count(viewer.SystemContext(context.Background()))
		require.NoError(t, err)
		require.Equal(t, 2, n)
	})
}

// TestCampaignLifecycleUnseenWindow: a campaign whose whole window passed
// between two runs ends without being announced; every tenant's campaigns
// move in one run, each event in its own tenant.
func TestCampaignLifecycleUnseenWindow(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t0 := time.Date(2026, 5, 4, 15, 0, 0, 0, time.UTC)
		b := campSetup(t, db, t0)
		other, err := b.app.Backoffice.CreateTenant(viewer.SystemContext(context.Background()), "Outra", nil)
		require.NoError(t, err)
		otherCtx := viewer.TenantContext(context.Background(), other.ID)

		gone := b.campaign(b.ctx, t, "Relâmpago", "gift", t0.Add(time.Hour), t0.Add(2*time.Hour), nil)
		mine := b.campaign(b.ctx, t, "Minha", "gift", t0.Add(time.Hour), t0.Add(48*time.Hour), nil)
		theirs := b.campaign(otherCtx, t, "Deles", "gift", t0.Add(time.Hour), t0.Add(48*time.Hour), nil)

		b.clock.Set(t0.Add(5 * time.Hour))
		b.runLifecycle(t)
		require.Equal(t, campaign.StatusEnded, b.stored(t, gone.ID))
		require.Empty(t, b.activations(t, gone.ID))
		require.Equal(t, campaign.StatusActive, b.stored(t, mine.ID))
		require.Equal(t, campaign.StatusActive, b.stored(t, theirs.ID))
		mineEv, theirsEv := b.activations(t, mine.ID), b.activations(t, theirs.ID)
		require.Len(t, mineEv, 1)
		require.Len(t, theirsEv, 1)
		require.Equal(t, b.tenant, mineEv[0].TenantID)
		require.Equal(t, other.ID, theirsEv[0].TenantID)

		// Each tenant sees its own event only.
		n, err := b.db.Ent.Event.Query().Where(event.Type(outbox.CampaignActivated)).Count(otherCtx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
	})
}

func decimalPtr(s string) *decimal.Decimal {
	d := decimal.RequireFromString(s)
	return &d
}

// campJob is a credit_cashback row of river_job.
type campJob struct {
	id          int64
	args        jobs.CreditCashback
	state       string
	scheduledAt time.Time
}

func (b *campBundle) cashbackJobs(t *testing.T) []campJob {
	t.Helper()
	rows, err := b.db.SQL.Query(`SELECT id, args, state, scheduled_at FROM river_job WHERE kind = 'credit_cashback' ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	var out []campJob
	for rows.Next() {
		var j campJob
		var args []byte
		require.NoError(t, rows.Scan(&j.id, &args, &j.state, &j.scheduledAt))
		require.NoError(t, json.Unmarshal(args, &j.args))
		out = append(out, j)
	}
	require.NoError(t, rows.Err())
	return out
}

// work works a job as River would hand it over.
func (b *campBundle) work(j campJob) error {
	return b.cashback.Work(context.Background(), &river.Job[jobs.CreditCashback]{
		JobRow: &rivertype.JobRow{ID: j.id, Kind: jobs.CreditCashback{}.Kind()}, Args: j.args,
	})
}

func TestCampaignCashbackJob(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		// The App's clock starts at the real time, so River (which reads
		// its own clock) sees a job due in 7 days as scheduled.
		t0 := time.Now().UTC().Truncate(time.Second)
		b := campSetup(t, db, t0)
		cash := func(days int) *campaigns.DiscountInput {
			return &campaigns.DiscountInput{Mode: "percentage", Value: decimalPtr("10"), CreditAfterDays: &days}
		}
		atOnce := b.campaign(b.ctx, t, "Cashback na hora", "cashback", t0.Add(-time.Hour), t0.AddDate(0, 1, 0), cash(0))
		week := b.campaign(b.ctx, t, "Cashback em 7 dias", "cashback", t0.Add(-time.Hour), t0.AddDate(0, 1, 0), cash(7))
		shipping := b.campaign(b.ctx, t, "Frete grátis", "cashback", t0.Add(-time.Hour), t0.AddDate(0, 1, 0),
			&campaigns.DiscountInput{Mode: "free_shipping"})
		discount := b.campaign(b.ctx, t, "Desconto", "discount", t0.Add(-time.Hour), t0.AddDate(0, 1, 0),
			&campaigns.DiscountInput{Mode: "percentage", Value: decimalPtr("10")})
		cust, err := b.app.Customers.CreateCustomer(b.ctx, customers.CustomerInput{
			Name: opt.Of("Helena"), Email: opt.Of("helena@example.com"), CPF: opt.Of("52998224725"),
		})
		require.NoError(t, err)
		v, err := b.app.Checkout.ValidateCart(b.ctx, checkout.ValidateInput{CustomerID: cust.ID, Channel: "pdv", Cart: eligibility.Cart{
			Items: []eligibility.Item{{SKU: "A", Quantity: decimal.NewFromInt(1), UnitPrice: decimal.RequireFromString("120.00")}},
		}})
		require.NoError(t, err)
		require.Len(t, v.Eligible, 4)
		redeem := func(c *ent.Campaign) *ent.Redemption {
			red, _, err := b.app.Checkout.RedeemCampaign(b.ctx, checkout.RedeemInput{
				CampaignID: c.ID, CustomerID: cust.ID, OrderID: "order-1", Token: v.Token, AmountPaid: decimal.NewFromInt(120),
			}, nil)
			require.NoError(t, err)
			return red
		}
		redAtOnce, redWeek := redeem(atOnce), redeem(week)
		redeem(shipping)
		redeem(discount)
		require.True(t, redWeek.CashbackAmount.Equal(decimal.NewFromInt(12)), redWeek.CashbackAmount.String())

		queued := b.cashbackJobs(t)
		require.Len(t, queued, 2, "one job per cashback redemption with money; none for free shipping or a discount")
		require.Equal(t, jobs.CreditCashback{TenantID: b.tenant, RedemptionID: redAtOnce.ID}, queued[0].args)
		require.Equal(t, jobs.CreditCashback{TenantID: b.tenant, RedemptionID: redWeek.ID}, queued[1].args)
		require.Equal(t, "available", queued[0].state, "credit_after_days 0: at once")
		require.False(t, queued[0].scheduledAt.After(time.Now()), "due now: %s", queued[0].scheduledAt)
		require.Equal(t, "scheduled", queued[1].state)
		require.WithinDuration(t, t0.AddDate(0, 0, 7), queued[1].scheduledAt, time.Millisecond, "credit_after_days 7")

		balance := func() int64 {
			c, err := b.db.Ent.Customer.Get(b.ctx, cust.ID)
			require.NoError(t, err)
			return c.PointsBalance
		}
		require.Zero(t, balance())

		// Working a job twice credits once: R$ 12 of cashback at 1 point per R$.
		require.NoError(t, b.work(queued[0]))
		require.EqualValues(t, 12, balance())
		require.NoError(t, b.work(queued[0]))
		require.EqualValues(t, 12, balance())

		b.clock.Set(t0.AddDate(0, 0, 7))
		errs := make(chan error, 3)
		for range 3 {
			go func() { errs <- b.work(queued[1]) }()
		}
		for range 3 {
			require.NoError(t, <-errs)
		}
		require.EqualValues(t, 24, balance())

		entries, err := b.db.Ent.PointsEntry.Query().Where(pointsentry.CustomerID(cust.ID)).
			Order(ent.Asc(pointsentry.FieldCreatedAt)).All(b.ctx)
		require.NoError(t, err)
		require.Len(t, entries, 2)
		for i, red := range []*ent.Redemption{redAtOnce, redWeek} {
			require.Equal(t, pointsentry.KindBonus, entries[i].Kind)
			require.Equal(t, pointsentry.SourceKindRedemption, entries[i].SourceKind)
			require.Equal(t, red.ID, *entries[i].SourceID)
			require.EqualValues(t, 12, entries[i].Points)
		}
		require.True(t, entries[1].CreatedAt.Equal(t0.AddDate(0, 0, 7)), "credited on the jobs' clock")
	})
}
