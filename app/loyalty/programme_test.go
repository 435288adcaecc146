package loyalty_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/pointslot"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
)

// programme is a tenant with programme settings, its app on a test clock,
// and helpers to move and read its customers' points.
type programme struct {
	t     *testing.T
	db    *storage.DB
	a     *app.App
	clock *testclock.Clock
	ctx   context.Context
	id    string
	next  int
}

func newProgramme(t *testing.T, db *storage.DB, start time.Time, s backoffice.TenantSettings) *programme {
	t.Helper()
	clock := testclock.New(start)
	env := apptest.New(t, db, apptest.WithClock(clock.Now), apptest.WithTenant("Programa"), apptest.WithTenantSettings(s))
	return &programme{t: t, db: db, a: env.App, clock: clock, ctx: env.Ctx, id: env.TenantID}
}

func (p *programme) customer() string {
	p.next++
	return apptest.Customer(p.t, p.a, p.id, 7000+p.next)
}

func (p *programme) credit(cust, order string, pts int64) *ent.PointsEntry {
	p.t.Helper()
	mv, err := p.a.Loyalty.CreditPoints(p.ctx, loyalty.CreditInput{CustomerID: cust, OrderID: order, Points: &pts,
		Amount: opt.Of(decimal.NewFromInt(pts)).Ptr()})
	require.NoError(p.t, err)
	return mv.Entry
}

// points reads a customer's balance, pending points and debt, and checks
// that together they are the sum of its ledger, and its lots hold the
// balance and the pending points apart.
func (p *programme) points(cust string) [3]int64 {
	p.t.Helper()
	c, err := p.db.Ent.Customer.Get(p.ctx, cust)
	require.NoError(p.t, err)
	var sum, spendable, pending sql.NullInt64
	require.NoError(p.t, p.db.SQL.QueryRow(`SELECT
		(SELECT SUM(points) FROM points_entries WHERE customer_id = $1),
		(SELECT SUM(remaining) FROM points_lots WHERE customer_id = $1 AND pending_until IS NULL),
		(SELECT SUM(remaining) FROM points_lots WHERE customer_id = $1 AND pending_until IS NOT NULL)`, cust).
		Scan(&sum, &spendable, &pending))
	require.Equal(p.t, sum.Int64, c.PointsBalance+c.PointsPending-c.PointsDebt, "balance + pending − debt is the ledger's sum")
	require.Equal(p.t, [2]int64{c.PointsBalance, c.PointsPending}, [2]int64{spendable.Int64, pending.Int64}, "the lots hold what the counters say")
	return [3]int64{c.PointsBalance, c.PointsPending, c.PointsDebt}
}

func (p *programme) release() {
	p.t.Helper()
	require.NoError(p.t, p.a.Loyalty.ReleasePendingPoints(context.Background(), jobs.ReleasePendingPoints{}))
}

func (p *programme) events(typ string) []*ent.Event {
	p.t.Helper()
	evs, err := p.db.Ent.Event.Query().Where(event.Type(typ)).Order(ent.Asc(event.FieldCreatedAt)).All(p.ctx)
	require.NoError(p.t, err)
	return evs
}

// roundTrip is data as a webhook receiver decodes it.
func roundTrip(t *testing.T, data map[string]any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(data)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out))
	return out
}

// TestPendingPoints: earned points wait out the tenant's pending period
// (to the local midnight that starts the seventh day), cannot be spent
// meanwhile, are taken back first by a return, and on release settle a
// debt before they reach the balance. Adjustments are spendable at once.
func TestPendingPoints(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		// 12:00 in São Paulo on 4 May 2026.
		p := newProgramme(t, db, time.Date(2026, 5, 4, 15, 0, 0, 0, time.UTC), backoffice.TenantSettings{PointsPendingDays: opt.Of(7).Ptr()})
		ana := p.customer()

		e := p.credit(ana, "ped-1", 500)
		require.Equal(t, int64(0), e.BalanceAfter, "the credit's points are not in the balance")
		require.Equal(t, [3]int64{0, 500, 0}, p.points(ana))
		_, err := p.a.Loyalty.DebitPoints(p.ctx, loyalty.DebitInput{CustomerID: ana, Points: 1, Reason: "troca"})
		require.Equal(t, "insufficient_points", errCode(err), "pending points cannot be spent")
		_, err = p.a.Loyalty.AdjustPoints(p.ctx, loyalty.AdjustInput{CustomerID: ana, Points: 10, Reason: "cortesia"})
		require.NoError(t, err)
		require.Equal(t, [3]int64{10, 500, 0}, p.points(ana), "an adjustment is spendable at once")

		// A return inside the period takes back pending points first.
		_, err = p.a.Loyalty.ReversePoints(p.ctx, loyalty.ReverseInput{CustomerID: ana, OrderID: "ped-1", ReversalID: "dev-1",
			Amount: opt.Of(decimal.NewFromInt(250)).Ptr(), Reason: "devolução"})
		require.NoError(t, err)
		require.Equal(t, [3]int64{10, 250, 0}, p.points(ana))

		// Released at the local midnight that starts 11 May, not before.
		for _, c := range []struct {
			at   time.Time
			want [3]int64
		}{
			{time.Date(2026, 5, 11, 2, 59, 59, 0, time.UTC), [3]int64{10, 250, 0}},
			{time.Date(2026, 5, 11, 3, 0, 0, 0, time.UTC), [3]int64{260, 0, 0}},
			{time.Date(2026, 5, 12, 3, 0, 0, 0, time.UTC), [3]int64{260, 0, 0}}, // a rerun changes nothing
		} {
			p.clock.Set(c.at)
			p.release()
			require.Equal(t, c.want, p.points(ana), "at %s", c.at)
		}

		// Bia spends everything; a return then finds another order's pending
		// points first and owes the rest; the next release settles the debt.
		bia := p.customer()
		p.credit(bia, "ped-2", 100)
		p.clock.Set(time.Date(2026, 5, 20, 3, 0, 0, 0, time.UTC))
		p.release()
		_, err = p.a.Loyalty.DebitPoints(p.ctx, loyalty.DebitInput{CustomerID: bia, Points: 100, Reason: "troca"})
		require.NoError(t, err)
		p.credit(bia, "ped-3", 40)
		require.Equal(t, [3]int64{0, 40, 0}, p.points(bia))
		_, err = p.a.Loyalty.ReversePoints(p.ctx, loyalty.ReverseInput{CustomerID: bia, OrderID: "ped-2", ReversalID: "dev-2",
			Amount: opt.Of(decimal.NewFromInt(100)).Ptr(), Reason: "devolução"})
		require.NoError(t, err)
		require.Equal(t, [3]int64{0, 0, 60}, p.points(bia))
		p.credit(bia, "ped-4", 80)
		require.Equal(t, [3]int64{0, 80, 60}, p.points(bia), "pending points do not settle a debt")
		p.clock.Set(time.Date(2026, 5, 27, 3, 0, 0, 0, time.UTC))
		p.release()
		require.Equal(t, [3]int64{20, 0, 0}, p.points(bia), "released points settle the debt first")
	})
}

// TestLevelDowngradeGrace: a level whose points fall short is kept for the
// tenant's grace period, announced by customer.level_will_downgrade, and
// dropped when it ends; points earned back inside it end the grace.
func TestLevelDowngradeGrace(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		p := newProgramme(t, db, time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC), backoffice.TenantSettings{LevelGraceDays: opt.Of(30).Ptr()})
		ana, bia := p.customer(), p.customer()
		p.credit(ana, "ped-1", 1000)
		p.credit(bia, "ped-2", 1000)

		level := func(id string) (customer.Level, *time.Time) {
			c, err := db.Ent.Customer.Get(p.ctx, id)
			require.NoError(t, err)
			return c.Level, c.LevelGraceSince
		}
		for _, id := range []string{ana, bia} {
			l, grace := level(id)
			require.Equal(t, customer.LevelSilver, l)
			require.Nil(t, grace)
		}

		// 11 January 2027 begins in São Paulo: the credits of 10 January 2026
		// leave the window; the grace begins.
		fell := time.Date(2027, 1, 11, 3, 0, 0, 0, time.UTC)
		p.clock.Set(fell)
		require.NoError(t, p.a.Loyalty.RecomputeLevels(context.Background(), jobs.RecomputeLevels{}))
		for _, id := range []string{ana, bia} {
			l, grace := level(id)
			require.Equal(t, customer.LevelSilver, l, "kept in grace")
			require.NotNil(t, grace)
			require.True(t, fell.Equal(*grace))
		}
		warned := p.events(outbox.CustomerLevelWillDowngrade)
		require.Len(t, warned, 2)
		require.Equal(t, map[string]any{"customer_id": ana, "level": "silver", "to": "bronze",
			"downgrade_at": "2027-02-10T03:00:00Z", "points_earned_12_months": float64(0), "points_to_keep_level": float64(1000)},
			roundTrip(t, warned[0].Data))

		// Bia earns her level back inside the grace.
		p.clock.Set(time.Date(2027, 1, 20, 12, 0, 0, 0, time.UTC))
		p.credit(bia, "ped-3", 1000)
		_, grace := level(bia)
		require.Nil(t, grace, "the level is held again")

		for _, c := range []struct {
			at  time.Time
			ana customer.Level
		}{
			{time.Date(2027, 2, 10, 2, 59, 59, 0, time.UTC), customer.LevelSilver},
			{time.Date(2027, 2, 10, 3, 0, 0, 0, time.UTC), customer.LevelBronze},
		} {
			p.clock.Set(c.at)
			require.NoError(t, p.a.Loyalty.RecomputeLevels(context.Background(), jobs.RecomputeLevels{}))
			l, _ := level(ana)
			require.Equal(t, c.ana, l, "at %s", c.at)
		}
		l, grace := level(ana)
		require.Equal(t, customer.LevelBronze, l)
		require.Nil(t, grace)
		l, _ = level(bia)
		require.Equal(t, customer.LevelSilver, l)
		changed := p.events(outbox.CustomerLevelChanged)
		require.Len(t, changed, 3, "two upgrades to silver, then Ana's downgrade")
		require.Equal(t, "downgrade", roundTrip(t, changed[2].Data)["direction"])
		require.Len(t, p.events(outbox.CustomerLevelWillDowngrade), 2, "announced once per fall")
	})
}

// TestProgrammeSettingsRefused: settings out of range or at odds with the
// tenant's others are refused, naming the field, and change nothing.
func TestProgrammeSettingsRefused(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		p := newProgramme(t, db, time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC), backoffice.TenantSettings{PointsExpiryMonths: opt.Of(1).Ptr()})
		sys := viewer.SystemContext(context.Background())
		for _, c := range []struct {
			name  string
			s     backoffice.TenantSettings
			field string
		}{
			{"unknown zone", backoffice.TenantSettings{TimeZone: opt.Of("America/Atlantis").Ptr()}, "time_zone"},
			{"the machine's zone", backoffice.TenantSettings{TimeZone: opt.Of("Local").Ptr()}, "time_zone"},
			{"empty zone", backoffice.TenantSettings{TimeZone: opt.Of("").Ptr()}, "time_zone"},
			{"negative pending", backoffice.TenantSettings{PointsPendingDays: opt.Of(-1).Ptr()}, "points_pending_days"},
			{"pending over 90", backoffice.TenantSettings{PointsPendingDays: opt.Of(91).Ptr()}, "points_pending_days"},
			{"pending past expiry", backoffice.TenantSettings{PointsPendingDays: opt.Of(28).Ptr()}, "points_pending_days"},
			{"pending past a shorter expiry", backoffice.TenantSettings{PointsPendingDays: opt.Of(60).Ptr(), PointsExpiryMonths: opt.Of(2).Ptr()}, "points_pending_days"},
			{"negative grace", backoffice.TenantSettings{LevelGraceDays: opt.Of(-1).Ptr()}, "level_grace_days"},
			{"grace over a year", backoffice.TenantSettings{LevelGraceDays: opt.Of(366).Ptr()}, "level_grace_days"},
			{"no refit", backoffice.TenantSettings{ChurnRefitDays: opt.Of(0).Ptr()}, "churn_refit_days"},
			{"refit over 90", backoffice.TenantSettings{ChurnRefitDays: opt.Of(91).Ptr()}, "churn_refit_days"},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := p.a.Backoffice.UpdateTenant(sys, p.id, c.s)
				e, ok := apperr.As(err)
				require.True(t, ok, "%v", err)
				require.Equal(t, "validation_error", e.Code)
				require.Equal(t, c.field, e.Field, e.Message)
			})
		}
		tn, err := db.Ent.Tenant.Get(sys, p.id)
		require.NoError(t, err)
		require.Equal(t, []any{"America/Sao_Paulo", 0, 0, 7, 1}, []any{tn.TimeZone, tn.PointsPendingDays, tn.LevelGraceDays, tn.ChurnRefitDays, tn.PointsExpiryMonths})

		tn, err = p.a.Backoffice.UpdateTenant(sys, p.id, backoffice.TenantSettings{TimeZone: opt.Of("America/Manaus").Ptr(), PointsPendingDays: opt.Of(27).Ptr(),
			LevelGraceDays: opt.Of(365).Ptr(), ChurnRefitDays: opt.Of(1).Ptr()})
		require.NoError(t, err)
		require.Equal(t, []any{"America/Manaus", 27, 365, 1}, []any{tn.TimeZone, tn.PointsPendingDays, tn.LevelGraceDays, tn.ChurnRefitDays})
	})
}

// TestChurnRefitInterval: the daily scoring refits the tenant's model only
// when the newest is churn_refit_days old; in between, customers are
// scored with the newest model.
func TestChurnRefitInterval(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		start := time.Date(2025, 6, 2, 15, 0, 0, 0, time.UTC)
		p := newProgramme(t, db, start, backoffice.TenantSettings{})
		for i := range 30 {
			cust := p.customer()
			for k := range 1 + i%5 {
				p.clock.Set(start.AddDate(0, 0, (i*3+k*41)%300))
				p.credit(cust, fmt.Sprintf("ped-%d-%d", i, k), int64(20+i*7%90))
			}
		}
		t0 := start.AddDate(1, 0, 0)
		for _, c := range []struct {
			at     time.Time
			refit  *int // churn_refit_days set before the run
			models int
			fitted time.Time // model_fitted_at of the scores
		}{
			{at: t0, models: 1, fitted: t0},
			{at: t0.AddDate(0, 0, 6), models: 1, fitted: t0},
			{at: t0.AddDate(0, 0, 7), models: 2, fitted: t0.AddDate(0, 0, 7)},
			{at: t0.AddDate(0, 0, 8), refit: opt.Of(1).Ptr(), models: 3, fitted: t0.AddDate(0, 0, 8)},
		} {
			if c.refit != nil {
				_, err := p.a.Backoffice.UpdateTenant(viewer.SystemContext(context.Background()), p.id, backoffice.TenantSettings{ChurnRefitDays: c.refit})
				require.NoError(t, err)
			}
			p.clock.Set(c.at)
			n, err := p.a.Scoring.ScoreCustomers(p.ctx, c.at)
			require.NoError(t, err)
			require.Equal(t, 30, n)
			models, err := db.Ent.ChurnModel.Query().Count(p.ctx)
			require.NoError(t, err)
			require.Equal(t, c.models, models, "at %s", c.at)
			scores, err := db.Ent.CustomerScore.Query().All(p.ctx)
			require.NoError(t, err)
			require.Len(t, scores, 30)
			for _, s := range scores {
				require.NotNil(t, s.ModelFittedAt)
				require.True(t, c.fitted.Equal(*s.ModelFittedAt), "scored at %s with the model of %s", c.at, s.ModelFittedAt)
				require.True(t, c.at.Equal(s.ScoredAt))
			}
		}
	})
}

// TestPendingPointsConcurrently: two release jobs (two worker processes)
// run while debits, returns and new pending credits go on for one
// customer: every lot is released once, and the balance, the pending points
// and the debt still add up to the ledger and agree with the lots.
func TestPendingPointsConcurrently(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t0 := time.Date(2026, 5, 4, 15, 0, 0, 0, time.UTC)
		p := newProgramme(t, db, t0, backoffice.TenantSettings{PointsPendingDays: opt.Of(7).Ptr()})
		ana := p.customer()
		for i := range 20 {
			p.credit(ana, fmt.Sprintf("ped-%d", i), 100)
		}
		_, err := p.a.Loyalty.AdjustPoints(p.ctx, loyalty.AdjustInput{CustomerID: ana, Points: 500, Reason: "saldo inicial"})
		require.NoError(t, err)
		require.Equal(t, [3]int64{500, 2000, 0}, p.points(ana))
		p.clock.Set(t0.AddDate(0, 0, 8)) // the 20 credits are due

		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, 40)
		for i := range 32 {
			wg.Go(func() {
				<-start
				var err error
				switch {
				case i < 2:
					err = apptest.Process(p.a).Loyalty.ReleasePendingPoints(context.Background(), jobs.ReleasePendingPoints{})
				case i < 17:
					_, err = p.a.Loyalty.DebitPoints(p.ctx, loyalty.DebitInput{CustomerID: ana, Points: 90, Reason: "troca"})
					if errCode(err) == "insufficient_points" {
						err = nil // the release had not reached enough lots yet
					}
				case i < 27:
					_, err = p.a.Loyalty.ReversePoints(p.ctx, loyalty.ReverseInput{CustomerID: ana, OrderID: fmt.Sprintf("ped-%d", i-17),
						ReversalID: fmt.Sprintf("dev-%d", i), Amount: opt.Of(decimal.NewFromInt(100)).Ptr(), Reason: "devolução"})
				default:
					_, err = p.a.Loyalty.CreditPoints(p.ctx, loyalty.CreditInput{CustomerID: ana, OrderID: fmt.Sprintf("novo-%d", i), Points: opt.Of(int64(30)).Ptr()})
				}
				errs <- err
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		p.release()          // whatever a job met locked is released now
		got := p.points(ana) // the ledger, the counters and the lots agree
		require.LessOrEqual(t, got[1], int64(5*30), "only the new credits may be pending (returns take them first)")
		due, err := db.Ent.PointsLot.Query().Where(pointslot.CustomerID(ana), pointslot.PendingUntilNotNil(),
			pointslot.CreatedAt(t0)).Count(p.ctx)
		require.NoError(t, err)
		require.Zero(t, due, "every due lot was released")
	})
}
