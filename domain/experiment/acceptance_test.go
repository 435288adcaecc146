package experiment_test

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/experiment"
)

// trial is one synthetic campaign: customers split by a 10% holdout, each
// buying with probability base (base+effect when treated), a basket of R$
// 20.00 to R$ 200.00 (uniform, to the cent) when buying.
type trial struct {
	customers    int
	base, effect float64
}

// basketMean is the mean basket of run: (20 + 200) / 2.
const basketMean = 110.0

// run draws the customers' outcomes of seed and measures the lift.
func (tr trial) run(seed uint64) experiment.Lift {
	rng := rand.New(rand.NewPCG(seed, 37))
	campaign := "cmp_synthetic_" + strconv.FormatUint(seed, 10)
	var treated, heldOut experiment.Group
	for i := range tr.customers {
		held := experiment.HeldOut("cus_"+strconv.Itoa(i), campaign, 1000)
		p := tr.base
		g := &heldOut
		if !held {
			p, g = p+tr.effect, &treated
		}
		if rng.Float64() < p {
			g.Add(true, decimal.New(2000+rng.Int64N(18001), -2))
		} else {
			g.Add(false, decimal.Zero)
		}
	}
	return experiment.Measure(treated, heldOut, decimal.Zero, true)
}

// covers tells whether m's interval holds v.
func covers(m experiment.Metric, v float64) bool {
	x := decimal.NewFromFloat(v)
	return m.Low != nil && !x.LessThan(*m.Low) && !x.GreaterThan(*m.High)
}

// TestLiftAcceptance is the acceptance at the level of the
// statistics: treated customers buying with a known extra probability
// (5 points over 30%), the lift report's interval holds it in at least 95
// of 100 seeds; with no effect (an A/A experiment), the lift is
// significant in at most 5 of 100 seeds. The revenue per customer is held
// to the same, its true difference being the effect times the mean basket.
func TestLiftAcceptance(t *testing.T) {
	const seeds = 100
	for _, tc := range []struct {
		name   string
		effect float64
	}{
		{"A/B: 5 points more buyers", 0.05},
		{"A/A: no effect", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := trial{customers: 20000, base: 0.30, effect: tc.effect}
			shareCovered, revenueCovered, shareSignificant, revenueSignificant := 0, 0, 0, 0
			for seed := range uint64(seeds) {
				l := tr.run(seed + 1)
				require.InDelta(t, 2000, l.HeldOut.Customers, 300, "a 10%% holdout")
				if covers(l.BuyerShare, tc.effect) {
					shareCovered++
				}
				if covers(l.RevenuePerCustomer, tc.effect*basketMean) {
					revenueCovered++
				}
				if l.BuyerShare.Significant {
					shareSignificant++
				}
				if l.RevenuePerCustomer.Significant {
					revenueSignificant++
				}
			}
			t.Logf("of %d seeds: share covered %d, significant %d; revenue per customer covered %d, significant %d",
				seeds, shareCovered, shareSignificant, revenueCovered, revenueSignificant)
			require.GreaterOrEqual(t, shareCovered, 95)
			require.GreaterOrEqual(t, revenueCovered, 95)
			if tc.effect == 0 {
				require.LessOrEqual(t, shareSignificant, 5)
				require.LessOrEqual(t, revenueSignificant, 5)
			} else {
				// The design detects it: 2,000 held out against 18,000.
				require.GreaterOrEqual(t, shareSignificant, 95)
			}
		})
	}
}
