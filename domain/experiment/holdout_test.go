package experiment_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/experiment"
)

func TestHeldOut(t *testing.T) {
	for _, tc := range []struct {
		name               string
		customer, campaign string
		basisPoints        int
		want               bool
	}{
		{"no holdout holds out no one", "cus_1", "cmp_1", 0, false},
		{"every customer at the whole", "cus_1", "cmp_1", experiment.BasisPoints, true},
		{"no customer is never held out", "", "cmp_1", experiment.BasisPoints, false},
		{"below the draw is treated", "cus_1", "cmp_1", experiment.Draw("cus_1", "cmp_1"), false},
		{"above the draw is held out", "cus_1", "cmp_1", experiment.Draw("cus_1", "cmp_1") + 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, experiment.HeldOut(tc.customer, tc.campaign, tc.basisPoints))
		})
	}
}

// TestDrawIsStableAndUniform pins the hash (a change would move customers
// across the sides of running experiments; the figure was computed apart,
// with Python's hashlib) and checks a 10% holdout holds out about 10% of
// customers, and another campaign other customers.
func TestDrawIsStableAndUniform(t *testing.T) {
	require.Equal(t, 5290, experiment.Draw("cus_01J0000000000000000000000", "cmp_01J0000000000000000000000"))
	const n = 100000
	a, b, both := 0, 0, 0
	for i := range n {
		id := "cus_" + strconv.Itoa(i)
		inA, inB := experiment.HeldOut(id, "cmp_a", 1000), experiment.HeldOut(id, "cmp_b", 1000)
		if inA {
			a++
		}
		if inB {
			b++
		}
		if inA && inB {
			both++
		}
	}
	// 10% ± 5 standard deviations (95 customers of 100000).
	for _, held := range []int{a, b} {
		require.InDelta(t, n/10, held, 475)
	}
	require.InDelta(t, n/100, both, 160, "the campaigns' control groups are independent")
}
