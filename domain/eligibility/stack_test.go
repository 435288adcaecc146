package eligibility

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStack(t *testing.T) {
	t.Parallel()
	type offer struct {
		id       string
		stacking Stacking
		priority int
		amount   string
	}
	cases := []struct {
		name       string
		offers     []offer
		kept       []string
		excludedBy string // of every campaign not kept
	}{
		{"none", nil, []string{}, ""},
		{"combinable by default", []offer{{"a", "", 0, "5"}, {"b", Combinable, 0, "3"}}, []string{"a", "b"}, ""},
		{"one exclusive alone", []offer{{"a", Exclusive, 0, "5"}}, []string{"a"}, ""},
		{"exclusive worth more than the combination", []offer{{"a", "", 0, "5"}, {"x", Exclusive, 0, "9"}, {"b", "", 0, "3"}}, []string{"x"}, "x"},
		{"combination worth more than the exclusive", []offer{{"a", "", 0, "5"}, {"x", Exclusive, 9, "7"}, {"b", "", 0, "3"}}, []string{"a", "b"}, "a"},
		{"tie: the higher priority", []offer{{"a", "", 1, "5"}, {"x", Exclusive, 2, "5"}}, []string{"x"}, "x"},
		{"tie, same priority: the combination", []offer{{"x", Exclusive, 1, "5"}, {"a", "", 1, "5"}}, []string{"a"}, "a"},
		{"the best of two exclusives", []offer{{"x", Exclusive, 0, "4"}, {"y", Exclusive, 0, "6"}}, []string{"y"}, "y"},
		{"two equal exclusives: the first listed", []offer{{"x", Exclusive, 0, "6"}, {"y", Exclusive, 0, "6"}}, []string{"x"}, "x"},
		{"points only: the exclusive of higher priority", []offer{{"p", "", 0, "0"}, {"q", Exclusive, 1, "0"}}, []string{"q"}, "q"},
		{"points only, equal priority: the combination", []offer{{"p", "", 0, "0"}, {"q", Exclusive, 0, "0"}}, []string{"p"}, "p"},
		{"excluded by the combination's highest priority", []offer{{"a", "", 1, "5"}, {"b", "", 3, "1"}, {"x", Exclusive, 0, "5.99"}}, []string{"a", "b"}, "b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var eligible []Eligible
			for _, o := range tc.offers {
				eligible = append(eligible, Eligible{
					Campaign: Campaign{ID: o.id, Stacking: o.stacking, Priority: o.priority},
					Benefit:  Benefit{Amount: d(o.amount)},
				})
			}
			kept, excluded := Stack(eligible)
			ids := []string{}
			for _, e := range kept {
				ids = append(ids, e.Campaign.ID)
			}
			require.Equal(t, tc.kept, ids)
			require.Len(t, excluded, len(tc.offers)-len(tc.kept))
			for _, ie := range excluded {
				require.Equal(t, StackingExcluded, ie.Reason)
				require.Equal(t, tc.excludedBy, ie.ExcludedBy)
				require.NotContains(t, ids, ie.Campaign.ID)
			}
		})
	}
}
