package experiment_test

import (
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/experiment"
)

// group is a Group of customers by their revenue; a revenue of 0 did not
// buy.
func group(revenues ...int64) experiment.Group {
	var g experiment.Group
	for _, r := range revenues {
		g.Add(r > 0, decimal.NewFromInt(r))
	}
	return g
}

// repeat is n customers of revenue r.
func repeat(n int, r int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// metric is a Metric by its figures as text; low and high "" for none.
type metric struct {
	treated, heldOut, difference, low, high string
	significant                             bool
}

func requireMetric(t *testing.T, want metric, got experiment.Metric, name string) {
	t.Helper()
	d := func(s string) string { return decimal.RequireFromString(s).String() }
	require.Equal(t, d(want.treated), got.Treated.String(), name+" treated")
	require.Equal(t, d(want.heldOut), got.HeldOut.String(), name+" held out")
	require.Equal(t, d(want.difference), got.Difference.String(), name+" difference")
	if want.low == "" {
		require.Nil(t, got.Low, name+" low")
		require.Nil(t, got.High, name+" high")
	} else {
		require.NotNil(t, got.Low, name+" low")
		require.Equal(t, d(want.low), got.Low.String(), name+" low")
		require.Equal(t, d(want.high), got.High.String(), name+" high")
	}
	require.Equal(t, want.significant, got.Significant, name+" significant")
}

// TestMeasure: the intervals are Welch's, their figures computed apart
// (Python, Student's t from the regularized incomplete beta function).
func TestMeasure(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		treated, heldOut             experiment.Group
		discounts                    string
		nothingGiven                 bool
		share, perCustomer, perBuyer metric
		incremental, net             string
		verdict                      experiment.Verdict
	}{
		{
			name:    "equal variances: 4 degrees of freedom, t = 2.776445",
			treated: group(2, 4, 6), heldOut: group(1, 3, 5), discounts: "1.5",
			share:       metric{"1", "1", "0", "0", "0", false},
			perCustomer: metric{"4", "3", "1", "-3.53", "5.53", false},
			perBuyer:    metric{"4", "3", "1", "-3.53", "5.53", false},
			incremental: "3", net: "1.5", verdict: experiment.NotSignificant,
		},
		{
			name:    "unequal sizes and variances: 4.0261 degrees of freedom",
			treated: group(0, 0, 10, 20, 30), heldOut: group(5, 5, 6), discounts: "0",
			share:       metric{"0.6", "1", "-0.4", "-1.080087", "0.280087", false},
			perCustomer: metric{"12", "5.33", "6.67", "-9.51", "22.84", false},
			perBuyer:    metric{"20", "5.33", "14.67", "-10.06", "39.39", false},
			incremental: "33.33", net: "33.33", verdict: experiment.NotSignificant,
		},
		{
			name:    "a lift in buyers: 60 of 100 against 40 of 100",
			treated: group(append(repeat(60, 50), repeat(40, 0)...)...), heldOut: group(append(repeat(40, 50), repeat(60, 0)...)...),
			discounts:   "300",
			share:       metric{"0.6", "0.4", "0.2", "0.062686", "0.337314", true},
			perCustomer: metric{"30", "20", "10", "3.13", "16.87", true},
			perBuyer:    metric{"50", "50", "0", "0", "0", false},
			incremental: "1000", net: "700", verdict: experiment.Increased,
		},
		{
			name:    "no variance, different means: the interval is the difference",
			treated: group(10, 10), heldOut: group(5, 5), discounts: "2",
			share:       metric{"1", "1", "0", "0", "0", false},
			perCustomer: metric{"10", "5", "5", "5", "5", true},
			perBuyer:    metric{"10", "5", "5", "5", "5", true},
			incremental: "10", net: "8", verdict: experiment.Increased,
		},
		{
			name:    "one treated customer: no interval",
			treated: group(10), heldOut: group(5, 0, 7), discounts: "1",
			share:       metric{"1", "0.666667", "0.333333", "", "", false},
			perCustomer: metric{"10", "4", "6", "", "", false},
			perBuyer:    metric{"10", "6", "4", "", "", false},
			incremental: "6", net: "5", verdict: experiment.TooFew,
		},
		{
			name:    "no one held out: nothing to compare",
			treated: group(10, 20), heldOut: group(), discounts: "3",
			share:       metric{"1", "0", "1", "", "", false},
			perCustomer: metric{"15", "0", "15", "", "", false},
			perBuyer:    metric{"15", "0", "15", "", "", false},
			incremental: "0", net: "-3", verdict: experiment.TooFew,
		},
		{
			name:    "a fall in buyers: 40 of 100 against 60 of 100",
			treated: group(append(repeat(40, 50), repeat(60, 0)...)...), heldOut: group(append(repeat(60, 50), repeat(40, 0)...)...),
			discounts:   "300",
			share:       metric{"0.4", "0.6", "-0.2", "-0.337314", "-0.062686", true},
			perCustomer: metric{"20", "30", "-10", "-16.87", "-3.13", true},
			perBuyer:    metric{"50", "50", "0", "0", "0", false},
			incremental: "-1000", net: "-1300", verdict: experiment.Decreased,
		},
		{
			name:    "nothing given: a difference, but not the campaign's",
			treated: group(append(repeat(60, 50), repeat(40, 0)...)...), heldOut: group(append(repeat(40, 50), repeat(60, 0)...)...),
			discounts: "0", nothingGiven: true,
			share:       metric{"0.6", "0.4", "0.2", "0.062686", "0.337314", true},
			perCustomer: metric{"30", "20", "10", "3.13", "16.87", true},
			perBuyer:    metric{"50", "50", "0", "0", "0", false},
			incremental: "1000", net: "1000", verdict: experiment.NoBenefit,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := experiment.Measure(tc.treated, tc.heldOut, decimal.RequireFromString(tc.discounts), !tc.nothingGiven)
			requireMetric(t, tc.share, l.BuyerShare, "share")
			requireMetric(t, tc.perCustomer, l.RevenuePerCustomer, "per customer")
			requireMetric(t, tc.perBuyer, l.RevenuePerBuyer, "per buyer")
			require.Equal(t, decimal.RequireFromString(tc.incremental).String(), l.IncrementalRevenue.String())
			require.Equal(t, decimal.RequireFromString(tc.net).String(), l.NetRevenue.String())
			require.Equal(t, tc.verdict, l.Verdict)
		})
	}
}

// TestSummary: each verdict in a sentence, with the figures it rests on.
func TestSummary(t *testing.T) {
	buyers := func(n int) experiment.Group { return group(append(repeat(n, 50), repeat(100-n, 0)...)...) }
	for _, tc := range []struct {
		name             string
		treated, heldOut experiment.Group
		discounts        string
		gave             bool
		want             string
	}{
		{"increased", buyers(60), buyers(40), "300", true, "Treated customers bought significantly more: treated customers paid R$ 30.00 per customer, " +
			"held-out ones R$ 20.00 (difference R$ 10.00, 95% interval R$ 3.13 to R$ 16.87); R$ 1000.00 of incremental revenue, " +
			"R$ 700.00 net of the R$ 300.00 given."},
		{"decreased", buyers(40), buyers(60), "300", true, "Treated customers bought significantly less: treated customers paid R$ 20.00 per customer, " +
			"held-out ones R$ 30.00 (difference R$ -10.00, 95% interval R$ -16.87 to R$ -3.13); R$ -1000.00 of incremental revenue, " +
			"R$ -1300.00 net of the R$ 300.00 given."},
		{"not significant", group(2, 4, 6), group(1, 3, 5), "1.5", true, "No significant difference: treated customers paid R$ 4.00 per customer, " +
			"held-out ones R$ 3.00 (difference R$ 1.00, 95% interval R$ -3.53 to R$ 5.53); the interval includes zero, so the campaign may have changed nothing."},
		{"too few", group(10), group(5, 0, 7), "1", true, "Too few customers to tell: a group has fewer than two (treated customers paid R$ 10.00 per customer, " +
			"held-out ones R$ 4.00)."},
		{"nothing given", buyers(60), buyers(40), "0", false, "The campaign gave nothing in its period (no discount, cashback nor redemption): " +
			"there is no effect to measure (treated customers paid R$ 30.00 per customer, held-out ones R$ 20.00; the difference is chance, not the campaign's)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := experiment.Measure(tc.treated, tc.heldOut, decimal.RequireFromString(tc.discounts), tc.gave)
			require.Equal(t, tc.want, l.Summary())
		})
	}
}
