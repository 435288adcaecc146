package worker_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/pointslot"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
	"github.com/fideliza/fideliza/worker"
)

// t0 is when the first points are credited, at noon of the tenant's time
// zone (UTC here, so that instants read plainly). A month later than
// February is 28 days later, so at t0 + 11 months the lots of t0 are inside
// the 30-day notice window.
var t0 = time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)

// at is t0 moved by months and d.
func at(months int, d time.Duration) time.Time { return t0.AddDate(0, months, 0).Add(d) }

// midnight is the end of t0's day months later: when points credited at t0
// expire after months, and when points earned on t0's day leave the level
// window after 12.
func midnight(months int) time.Time { return at(months, 12*time.Hour) }

type pointsBundle struct {
	db     *storage.DB
	app    *app.App
	clock  *testclock.Clock
	ctx    context.Context // the tenant's
	tenant string
	expire river.Worker[jobs.ExpirePoints]
	notify river.Worker[jobs.NotifyExpiringPoints]
	levels river.Worker[jobs.RecomputeLevels]
}

// setupPoints makes a tenant with the default settings (points expire after
// 12 months; levels at 1000, 5000 and 20000 points) and the three jobs on a
// controllable clock.
func setupPoints(t *testing.T, db *storage.DB) *pointsBundle {
	t.Helper()
	clock := testclock.New(t0)
	env := apptest.New(t, db, apptest.WithClock(clock.Now), apptest.WithTenantSettings(backoffice.TenantSettings{TimeZone: opt.Of("UTC").Ptr()}))
	tn, err := db.Ent.Tenant.Get(env.Ctx, env.TenantID)
	require.NoError(t, err)
	require.Equal(t, 12, tn.PointsExpiryMonths)
	require.Equal(t, []int64{1000, 5000, 20000}, []int64{tn.SilverThreshold, tn.GoldThreshold, tn.DiamondThreshold})
	return &pointsBundle{
		db: db, app: env.App, clock: clock, ctx: env.Ctx, tenant: env.TenantID,
		expire: worker.For[jobs.ExpirePoints](apptest.Process(env.App)),
		notify: worker.For[jobs.NotifyExpiringPoints](apptest.Process(env.App)),
		levels: worker.For[jobs.RecomputeLevels](apptest.Process(env.App)),
	}
}

func (b *pointsBundle) customer(t *testing.T, i int) string {
	t.Helper()
	cpf := fmt.Sprintf("%09d", 123456780+i)
	digit := func(s string, w int) byte {
		sum := 0
		for j := 0; j < len(s); j++ {
			sum += int(s[j]-'0') * (w - j)
		}
		r := sum * 10 % 11
		if r == 10 {
			r = 0
		}
		return byte('0' + r)
	}
	cpf += string(digit(cpf, 10))
	cpf += string(digit(cpf, 11))
	c, err := b.app.Customers.CreateCustomer(b.ctx, customers.CustomerInput{
		Name: opt.Of(fmt.Sprintf("Cliente %d", i)), Email: opt.Of(fmt.Sprintf("c%d@example.com", i)), CPF: opt.Of(cpf),
	})
	require.NoError(t, err)
	return c.ID
}

func (b *pointsBundle) credit(t *testing.T, cust, order string, n int64) *ent.PointsEntry {
	t.Helper()
	mv, err := b.app.Loyalty.CreditPoints(b.ctx, loyalty.CreditInput{CustomerID: cust, OrderID: order, Points: &n})
	require.NoError(t, err)
	require.False(t, mv.Replayed)
	return mv.Entry
}

func (b *pointsBundle) runExpire(t *testing.T) {
	t.Helper()
	require.NoError(t, b.expire.Work(context.Background(), jobOf(jobs.ExpirePoints{})))
}

func (b *pointsBundle) runNotify(t *testing.T) {
	t.Helper()
	require.NoError(t, b.notify.Work(context.Background(), jobOf(jobs.NotifyExpiringPoints{})))
}

func (b *pointsBundle) runLevels(t *testing.T) {
	t.Helper()
	require.NoError(t, b.levels.Work(context.Background(), jobOf(jobs.RecomputeLevels{})))
}

// events lists the events of one type about one customer, oldest first.
func (b *pointsBundle) events(t *testing.T, typ, cust string) []*ent.Event {
	t.Helper()
	evs, err := b.db.Ent.Event.Query().Where(event.Type(typ), event.SubjectID(cust)).
		Order(ent.Asc(event.FieldID)).All(b.ctx)
	require.NoError(t, err)
	return evs
}

func (b *pointsBundle) entries(t *testing.T, cust string, kind pointsentry.Kind) []*ent.PointsEntry {
	t.Helper()
	es, err := b.db.Ent.PointsEntry.Query().Where(pointsentry.CustomerID(cust), pointsentry.KindEQ(kind)).
		Order(ent.Asc(pointsentry.FieldID)).All(b.ctx)
	require.NoError(t, err)
	return es
}

func (b *pointsBundle) lots(t *testing.T, cust string) []*ent.PointsLot {
	t.Helper()
	ls, err := b.db.Ent.PointsLot.Query().Where(pointslot.CustomerID(cust)).Order(ent.Asc(pointslot.FieldID)).All(b.ctx)
	require.NoError(t, err)
	return ls
}

func (b *pointsBundle) customerRow(t *testing.T, cust string) *ent.Customer {
	t.Helper()
	c, err := b.db.Ent.Customer.Query().Where(customer.ID(cust)).Only(b.ctx)
	require.NoError(t, err)
	return c
}

// balanceWant is what Balance must report.
type balanceWant struct {
	balance, expiring, earned int64
	next                      points.Level
	missing                   int64
}

func (b *pointsBundle) requireBalance(t *testing.T, cust string, want balanceWant) *loyalty.PointsBalance {
	t.Helper()
	got, err := b.app.Loyalty.Balance(b.ctx, cust)
	require.NoError(t, err)
	require.Equal(t, want, balanceWant{
		balance: got.Customer.PointsBalance, expiring: got.ExpiringPoints, earned: got.EarnedLast12Months,
		next: got.NextLevel, missing: got.PointsToNextLevel,
	}, "balance at %s", b.clock.Now().Format(time.RFC3339))
	var sum int64
	for i, l := range got.Expiring {
		sum += l.Points
		if i > 0 {
			require.False(t, l.ExpiresAt.Before(got.Expiring[i-1].ExpiresAt), "expiring lots are listed soonest first")
		}
	}
	require.Equal(t, got.ExpiringPoints, sum)
	return got
}

func requireLevelEvent(t *testing.T, e *ent.Event, from, to points.Level, direction string, earned int64, when time.Time) {
	t.Helper()
	require.Equal(t, string(from), e.Data["from"])
	require.Equal(t, string(to), e.Data["to"])
	require.Equal(t, direction, e.Data["direction"])
	require.EqualValues(t, earned, e.Data["points_earned_12_months"])
	require.True(t, e.CreatedAt.Equal(when), "event at %s, want %s", e.CreatedAt, when)
}

// TestPointsExpiringNoticeAndExpiry: a month before points expire the notice
// job records one points.expiring event per lot, once; when they expire the
// expiry job writes one expiration entry per lot, once, and the level falls
// with them. The clock is moved, never waited for.
func TestPointsExpiringNoticeAndExpiry(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		b := setupPoints(t, db)
		cust := b.customer(t, 1)

		// t0: two lots expiring together at t0 + 12 months.
		b.credit(t, cust, "ord-1", 300)
		b.credit(t, cust, "ord-2", 200)
		b.clock.Set(at(0, 24*time.Hour))
		_, err := b.app.Loyalty.DebitPoints(b.ctx, loyalty.DebitInput{CustomerID: cust, Points: 100})
		require.NoError(t, err)
		lots := b.lots(t, cust)
		require.Len(t, lots, 2)
		require.EqualValues(t, []int64{200, 200}, []int64{lots[0].Remaining, lots[1].Remaining},
			"equal expiries are spent in crediting order")
		b.requireBalance(t, cust, balanceWant{balance: 400, earned: 500, next: points.Silver, missing: 500})

		// t0 + 2 months: a third lot, expiring at the end of its day 12
		// months later, lifts the customer to silver.
		b.clock.Set(at(2, 0))
		third := b.credit(t, cust, "ord-3", 700)
		require.True(t, third.ExpiresAt.Equal(midnight(14)))
		require.Equal(t, customer.LevelSilver, b.customerRow(t, cust).Level)
		b.requireBalance(t, cust, balanceWant{balance: 1100, earned: 1200, next: points.Gold, missing: 3800})

		// t0 + 10 months: nothing within 30 days.
		b.clock.Set(at(10, 0))
		b.runNotify(t)
		require.Empty(t, b.events(t, outbox.PointsExpiring, cust))
		b.requireBalance(t, cust, balanceWant{balance: 1100, earned: 1200, next: points.Gold, missing: 3800})

		// t0 + 11 months: the first two lots expire in 28 days.
		b.clock.Set(at(11, 0))
		for range 2 { // a rerun records nothing more
			b.runNotify(t)
			evs := b.events(t, outbox.PointsExpiring, cust)
			require.Len(t, evs, 2, "one points.expiring event per lot")
			for i, e := range evs {
				require.Equal(t, lots[i].ID, e.Data["lot_id"])
				require.EqualValues(t, 200, e.Data["points"])
				require.Equal(t, midnight(12).Format(time.RFC3339Nano), e.Data["expires_at"])
				require.True(t, e.CreatedAt.Equal(at(11, 0)))
			}
		}
		for _, l := range b.lots(t, cust)[:2] {
			require.NotNil(t, l.ExpiringNotifiedAt)
		}
		got := b.requireBalance(t, cust, balanceWant{balance: 1100, expiring: 400, earned: 1200, next: points.Gold, missing: 3800})
		require.Len(t, got.Expiring, 2)
		require.True(t, got.Expiring[0].ExpiresAt.Equal(midnight(12)))

		// A second before expiry: nothing expires.
		b.clock.Set(midnight(12).Add(-time.Second))
		b.runExpire(t)
		require.Empty(t, b.entries(t, cust, pointsentry.KindExpiration))
		require.EqualValues(t, 1100, b.customerRow(t, cust).PointsBalance)

		// A second after: one expiration entry per lot, and the credits of t0
		// leave the 12 months, so silver falls to bronze in the same run.
		b.clock.Set(midnight(12).Add(time.Second))
		for range 2 { // a rerun changes nothing
			b.runExpire(t)
			exps := b.entries(t, cust, pointsentry.KindExpiration)
			require.Len(t, exps, 2)
			require.ElementsMatch(t, []string{lots[0].ID, lots[1].ID}, []string{*exps[0].SourceID, *exps[1].SourceID},
				"one expiration entry per lot")
			for _, e := range exps {
				require.Equal(t, pointsentry.SourceKindLot, e.SourceKind)
				require.EqualValues(t, -200, e.Points)
				require.True(t, e.CreatedAt.Equal(midnight(12).Add(time.Second)))
			}
			require.EqualValues(t, []int64{900, 700}, []int64{exps[0].BalanceAfter, exps[1].BalanceAfter})
			row := b.customerRow(t, cust)
			require.EqualValues(t, 700, row.PointsBalance)
			require.Equal(t, customer.LevelBronze, row.Level)
			moves := b.events(t, outbox.CustomerLevelChanged, cust)
			require.Len(t, moves, 2)
			requireLevelEvent(t, moves[0], points.Bronze, points.Silver, "upgrade", 1200, at(2, 0))
			requireLevelEvent(t, moves[1], points.Silver, points.Bronze, "downgrade", 700, midnight(12).Add(time.Second))
		}
		lots = b.lots(t, cust)
		require.EqualValues(t, []int64{0, 0, 700}, []int64{lots[0].Remaining, lots[1].Remaining, lots[2].Remaining})
		b.requireBalance(t, cust, balanceWant{balance: 700, earned: 700, next: points.Silver, missing: 300})

		// t0 + 13 months and a half: the third lot is within 30 days, after a
		// debit spent most of it; the notice tells what is left.
		b.clock.Set(at(13, 15*24*time.Hour))
		_, err = b.app.Loyalty.DebitPoints(b.ctx, loyalty.DebitInput{CustomerID: cust, Points: 650})
		require.NoError(t, err)
		b.runNotify(t)
		evs := b.events(t, outbox.PointsExpiring, cust)
		require.Len(t, evs, 3)
		require.Equal(t, lots[2].ID, evs[2].Data["lot_id"])
		require.EqualValues(t, 50, evs[2].Data["points"], "the notice tells what is left")
		b.requireBalance(t, cust, balanceWant{balance: 50, expiring: 50, earned: 700, next: points.Silver, missing: 300})

		// At the midnight ending its day 12 months on, the last lot expires,
		// and its credit leaves the 12 months at that same midnight.
		b.clock.Set(midnight(14))
		b.runExpire(t)
		b.runLevels(t)
		exps := b.entries(t, cust, pointsentry.KindExpiration)
		require.Len(t, exps, 3)
		require.Equal(t, lots[2].ID, *exps[2].SourceID)
		require.EqualValues(t, -50, exps[2].Points)
		require.Zero(t, b.customerRow(t, cust).PointsBalance)
		require.Len(t, b.events(t, outbox.CustomerLevelChanged, cust), 2)
		b.requireBalance(t, cust, balanceWant{next: points.Silver, missing: 1000})
	})
}

// TestPointsLevelJobs: a credit that reaches gold records the upgrade in its
// own transaction; a year and a day later the levels job lowers the level as
// the points leave the 12-month window, and the expiry job lowers it when
// the last points expire.
func TestPointsLevelJobs(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		b := setupPoints(t, db)
		cust := b.customer(t, 1)

		// The event lives and dies with the credit: a rolled-back credit
		// leaves neither entry nor event nor level.
		errAbort := errors.New("abort")
		order := "ord-rolled-back"
		err := db.InTx(b.ctx, func(tx storage.Tx) error {
			_, err := ledger.Ledger{Dialect: db.Dialect, Now: b.clock.Now}.Credit(b.ctx, tx.Ent, ledger.Credit{
				CustomerID: cust, Kind: pointsentry.KindCredit, Points: 6000, SourceKind: pointsentry.SourceKindOrder,
				SourceID: &order,
			})
			require.NoError(t, err)
			n, err := tx.Ent.Event.Query().Where(event.Type(outbox.CustomerLevelChanged), event.SubjectID(cust)).Count(b.ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n, "the event is written in the credit's transaction")
			return errAbort
		})
		require.ErrorIs(t, err, errAbort)
		require.Empty(t, b.events(t, outbox.CustomerLevelChanged, cust))
		require.Empty(t, b.entries(t, cust, pointsentry.KindCredit))
		require.Equal(t, customer.LevelBronze, b.customerRow(t, cust).Level)

		// t0: 5200 points reach gold at once.
		first := b.credit(t, cust, "ord-1", 5200)
		require.Equal(t, customer.LevelGold, b.customerRow(t, cust).Level)
		moves := b.events(t, outbox.CustomerLevelChanged, cust)
		require.Len(t, moves, 1)
		requireLevelEvent(t, moves[0], points.Bronze, points.Gold, "upgrade", 5200, first.CreatedAt)
		require.Equal(t, cust, moves[0].Data["customer_id"])
		b.requireBalance(t, cust, balanceWant{balance: 5200, earned: 5200, next: points.Diamond, missing: 14800})

		// t0 + 6 months: 1000 more; still gold, no event.
		b.clock.Set(at(6, 0))
		b.credit(t, cust, "ord-2", 1000)
		b.runLevels(t)
		require.Len(t, b.events(t, outbox.CustomerLevelChanged, cust), 1)
		b.requireBalance(t, cust, balanceWant{balance: 6200, earned: 6200, next: points.Diamond, missing: 13800})

		// t0 + 11 months + 1 day: the 5200 points expire within 30 days.
		b.clock.Set(at(11, 24*time.Hour))
		b.runLevels(t)
		require.Len(t, b.events(t, outbox.CustomerLevelChanged, cust), 1)
		b.requireBalance(t, cust, balanceWant{balance: 6200, expiring: 5200, earned: 6200, next: points.Diamond, missing: 13800})

		// t0 + 12 months + 1 day: the credit of t0 has left the window. Until
		// the expiry job runs, its lot is still in the balance, past due.
		b.clock.Set(at(12, 24*time.Hour))
		b.requireBalance(t, cust, balanceWant{balance: 6200, expiring: 5200, earned: 1000, next: points.Gold, missing: 4000})
		for range 2 { // a rerun records nothing more
			b.runLevels(t)
			require.Equal(t, customer.LevelSilver, b.customerRow(t, cust).Level)
			moves = b.events(t, outbox.CustomerLevelChanged, cust)
			require.Len(t, moves, 2)
			requireLevelEvent(t, moves[1], points.Gold, points.Silver, "downgrade", 1000, at(12, 24*time.Hour))
		}
		// The expiry job takes the 5200; the level is already right.
		b.runExpire(t)
		exps := b.entries(t, cust, pointsentry.KindExpiration)
		require.Len(t, exps, 1)
		require.EqualValues(t, -5200, exps[0].Points)
		require.Len(t, b.events(t, outbox.CustomerLevelChanged, cust), 2)
		b.requireBalance(t, cust, balanceWant{balance: 1000, earned: 1000, next: points.Gold, missing: 4000})

		// The end of t0 + 18 months' day: the last lot expires and its points
		// have left the window; the expiry job itself lowers silver to bronze.
		b.clock.Set(midnight(18))
		b.runExpire(t)
		require.Equal(t, customer.LevelBronze, b.customerRow(t, cust).Level)
		moves = b.events(t, outbox.CustomerLevelChanged, cust)
		require.Len(t, moves, 3)
		requireLevelEvent(t, moves[2], points.Silver, points.Bronze, "downgrade", 0, midnight(18))
		b.runLevels(t)
		require.Len(t, b.events(t, outbox.CustomerLevelChanged, cust), 3)
		b.requireBalance(t, cust, balanceWant{next: points.Silver, missing: 1000})
	})
}

// TestPointsLevelJobAcrossTenants: the levels job walks every tenant's
// customers and applies each tenant's thresholds.
func TestPointsLevelJobAcrossTenants(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		b := setupPoints(t, db)
		sys := viewer.SystemContext(context.Background())
		other, err := b.app.Backoffice.CreateTenant(sys, "Outra", nil)
		require.NoError(t, err)
		_, err = db.Ent.Tenant.UpdateOneID(other.ID).SetSilverThreshold(100).SetGoldThreshold(200).SetDiamondThreshold(300).Save(sys)
		require.NoError(t, err)
		ob := *b
		ob.ctx, ob.tenant = viewer.TenantContext(context.Background(), other.ID), other.ID
		mine, theirs := b.customer(t, 1), ob.customer(t, 2)
		b.credit(t, mine, "ord-1", 1500)
		ob.credit(t, theirs, "ord-1", 250)
		require.Equal(t, customer.LevelSilver, b.customerRow(t, mine).Level)
		require.Equal(t, customer.LevelGold, ob.customerRow(t, theirs).Level)
		b.clock.Set(at(6, 0))
		ob.credit(t, theirs, "ord-2", 120)
		require.Equal(t, customer.LevelDiamond, ob.customerRow(t, theirs).Level)
		// The next day (the other tenant counts São Paulo's days).
		b.clock.Set(at(12, 24*time.Hour))
		b.runLevels(t)
		require.Equal(t, customer.LevelBronze, b.customerRow(t, mine).Level)
		require.Equal(t, customer.LevelSilver, ob.customerRow(t, theirs).Level)
		require.Len(t, ob.events(t, outbox.CustomerLevelChanged, theirs), 3)
	})
}

// TestPointsExpiringNoticeTellsWhatIsLeft: points spent between the notice
// job's listing and its notice are not announced as expiring. A query
// interceptor spends them right after the listing.
func TestPointsExpiringNoticeTellsWhatIsLeft(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		b := setupPoints(t, db)
		partly, wholly := b.customer(t, 1), b.customer(t, 2)
		b.credit(t, partly, "ord-1", 700)
		b.credit(t, wholly, "ord-1", 300)
		b.clock.Set(at(11, 0))

		var armed sync.Once
		spend := func() {
			for cust, n := range map[string]int64{partly: 650, wholly: 300} {
				_, err := b.app.Loyalty.DebitPoints(b.ctx, loyalty.DebitInput{CustomerID: cust, Points: n})
				require.NoError(t, err)
			}
		}
		db.Ent.PointsLot.Intercept(ent.InterceptFunc(func(next ent.Querier) ent.Querier {
			return ent.QuerierFunc(func(ctx context.Context, q ent.Query) (ent.Value, error) {
				v, err := next.Query(ctx, q)
				if err == nil {
					armed.Do(spend) // the first listing is the notice job's
				}
				return v, err
			})
		}))
		b.runNotify(t)

		evs := b.events(t, outbox.PointsExpiring, partly)
		require.Len(t, evs, 1)
		require.EqualValues(t, 50, evs[0].Data["points"], "the notice tells what is left, not what the listing saw")
		require.Empty(t, b.events(t, outbox.PointsExpiring, wholly), "a lot spent meanwhile gets no notice")
		require.Nil(t, b.lots(t, wholly)[0].ExpiringNotifiedAt)
	})
}
