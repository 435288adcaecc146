package audiences_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
)

// TestAudienceFollowsPointsAndSegments: an audience over points, level or
// static segments is current as soon as the change commits, whichever
// operation or job made it (not at the next periodic recompute): points
// credited, adjusted, debited and expired, a level fallen with time, a
// customer added to or taken out of a static segment.
func TestAudienceFollowsPointsAndSegments(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		clock := testclock.New(time.Date(2026, 1, 10, 15, 0, 0, 0, time.UTC))
		env := apptest.New(t, db, apptest.WithClock(clock.Now), apptest.WithTenant("Programa"))
		ana, bia := apptest.Customer(t, env.App, env.TenantID, 7001), apptest.Customer(t, env.App, env.TenantID, 7002)
		a, ctx := env.App, env.Ctx
		vip, err := a.Customers.CreateSegment(ctx, customers.SegmentInput{Name: opt.Of("VIP").Ptr()})
		require.NoError(t, err)
		audience := func(name, rule string) *ent.Segment {
			seg, err := a.Customers.CreateSegment(ctx, customers.SegmentInput{Name: &name, Rule: &rule})
			require.NoError(t, err)
			return seg
		}
		rich, silver, vips := audience("Com pontos", `points >= 100`), audience("Prata", `level == "silver"`),
			audience("Os VIP", `"`+vip.ID+`" in segments`)
		members := func(seg *ent.Segment) []string {
			ids, err := seg.QueryCustomers().IDs(ctx)
			require.NoError(t, err)
			return ids
		}
		for _, step := range []struct {
			name               string
			do                 func() error
			rich, silver, vips []string
		}{
			{"points credited, a level reached", func() error {
				pts := int64(1000)
				_, err := a.Loyalty.CreditPoints(ctx, loyalty.CreditInput{CustomerID: ana, OrderID: "ped-1", Points: &pts,
					Amount: opt.Of(decimal.NewFromInt(pts)).Ptr()})
				return err
			}, []string{ana}, []string{ana}, nil},
			{"points adjusted", func() error {
				_, err := a.Loyalty.AdjustPoints(ctx, loyalty.AdjustInput{CustomerID: bia, Points: 150, Reason: "boas-vindas"})
				return err
			}, []string{ana, bia}, []string{ana}, nil},
			{"points debited", func() error {
				_, err := a.Loyalty.DebitPoints(ctx, loyalty.DebitInput{CustomerID: ana, Points: 950, Reason: "troca"})
				return err
			}, []string{bia}, []string{ana}, nil},
			{"a level fallen with time", func() error {
				clock.Set(time.Date(2027, 1, 11, 3, 0, 0, 0, time.UTC))
				return a.Loyalty.RecomputeLevels(context.Background(), jobs.RecomputeLevels{})
			}, []string{bia}, nil, nil},
			{"points expired", func() error {
				clock.Set(time.Date(2027, 3, 1, 3, 0, 0, 0, time.UTC))
				return a.Loyalty.ExpirePoints(context.Background(), jobs.ExpirePoints{})
			}, nil, nil, nil},
			{"added to a static segment", func() error {
				_, err := a.Customers.AddSegmentCustomers(ctx, vip.ID, []string{bia})
				return err
			}, nil, nil, []string{bia}},
			{"taken out of a static segment", func() error {
				_, err := a.Customers.RemoveSegmentCustomers(ctx, vip.ID, []string{bia})
				return err
			}, nil, nil, nil},
		} {
			require.NoError(t, step.do(), step.name)
			assert.ElementsMatch(t, step.rich, members(rich), "%s: points >= 100", step.name)
			assert.ElementsMatch(t, step.silver, members(silver), "%s: silver", step.name)
			assert.ElementsMatch(t, step.vips, members(vips), "%s: in VIP", step.name)
		}
	})
}
