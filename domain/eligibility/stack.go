package eligibility

import (
	"math"

	"github.com/shopspring/decimal"
)

// Stack keeps of the eligible campaigns of one order the best combination
// their stacking rules allow: every combinable campaign together, or one
// exclusive campaign alone, whichever gives the most R$ (discount and
// cashback); on a tie the combination holding the highest priority wins,
// then the combinable campaigns, then the exclusive listed first. The others are returned as ineligible,
// StackingExcluded by the combination's first campaign of highest priority.
// Both results keep the order of eligible; without exclusive campaigns
// every eligible campaign is kept.
func Stack(eligible []Eligible) ([]Eligible, []Ineligible) {
	const combined = -1 // best: the combinable campaigns together
	best, value, priority := combined, decimal.Zero, math.MinInt
	for i := range eligible {
		if c := &eligible[i].Campaign; c.Stacking != Exclusive {
			value = value.Add(eligible[i].Benefit.Amount)
			priority = max(priority, c.Priority)
		}
	}
	for i := range eligible {
		c, v := &eligible[i].Campaign, eligible[i].Benefit.Amount
		if c.Stacking == Exclusive && (v.GreaterThan(value) || v.Equal(value) && c.Priority > priority) {
			best, value, priority = i, v, c.Priority
		}
	}
	chosen := func(i int) bool {
		if best == combined {
			return eligible[i].Campaign.Stacking != Exclusive
		}
		return i == best
	}
	lead := ""
	for i := range eligible {
		if chosen(i) && eligible[i].Campaign.Priority == priority {
			lead = eligible[i].Campaign.ID
			break
		}
	}
	kept := make([]Eligible, 0, len(eligible))
	var excluded []Ineligible
	for i := range eligible {
		if chosen(i) {
			kept = append(kept, eligible[i])
			continue
		}
		excluded = append(excluded, Ineligible{Campaign: eligible[i].Campaign, Reason: StackingExcluded, ExcludedBy: lead})
	}
	return kept, excluded
}
