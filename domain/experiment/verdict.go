package experiment

import "fmt"

// Verdict is what a lift tells of its campaign, by the revenue per
// customer (the measure incremental and net revenue follow from).
type Verdict string

const (
	// NoBenefit: the campaign gave nothing in its period (no discount,
	// cashback nor redemption), so the groups' difference is chance, not
	// its effect.
	NoBenefit Verdict = "NO_BENEFIT"
	// TooFew: a group has fewer than two customers, so there is no
	// interval to judge by.
	TooFew Verdict = "TOO_FEW_CUSTOMERS"
	// NotSignificant: the interval includes 0; the campaign may have
	// changed nothing.
	NotSignificant Verdict = "NOT_SIGNIFICANT"
	// Increased and Decreased: the interval lies above, or below, 0.
	Increased Verdict = "INCREASED"
	Decreased Verdict = "DECREASED"
)

// verdict judges the lift: no benefit given first, then the revenue per
// customer's interval.
func (l Lift) verdict(gave bool) Verdict {
	m := l.RevenuePerCustomer
	switch {
	case !gave:
		return NoBenefit
	case m.Low == nil:
		return TooFew
	case !m.Significant:
		return NotSignificant
	case m.Difference.IsPositive():
		return Increased
	default:
		return Decreased
	}
}

// Summary says the verdict in a sentence, with the figures it rests on.
func (l Lift) Summary() string {
	m := l.RevenuePerCustomer
	diff := fmt.Sprintf("treated customers paid R$ %s per customer, held-out ones R$ %s", m.Treated.StringFixed(2), m.HeldOut.StringFixed(2))
	interval := ""
	if m.Low != nil && m.High != nil {
		interval = fmt.Sprintf(" (difference R$ %s, 95%% interval R$ %s to R$ %s)", m.Difference.StringFixed(2), m.Low.StringFixed(2), m.High.StringFixed(2))
	}
	switch l.Verdict {
	case NoBenefit:
		return "The campaign gave nothing in its period (no discount, cashback nor redemption): there is no effect to measure (" + diff +
			"; the difference is chance, not the campaign's)."
	case TooFew:
		return "Too few customers to tell: a group has fewer than two (" + diff + ")."
	case NotSignificant:
		return "No significant difference: " + diff + interval + "; the interval includes zero, so the campaign may have changed nothing."
	default:
		word := "more"
		if l.Verdict == Decreased {
			word = "less"
		}
		return fmt.Sprintf("Treated customers bought significantly %s: %s%s; R$ %s of incremental revenue, R$ %s net of the R$ %s given.",
			word, diff, interval, l.IncrementalRevenue.StringFixed(2), l.NetRevenue.StringFixed(2), l.Discounts.StringFixed(2))
	}
}
