package eligibility

import (
	"testing"
	"time"
)

// TestPeriodBudgetKey: a period is named by its first day in the zone; a
// week starts on Monday.
func TestPeriodBudgetKey(t *testing.T) {
	t.Parallel()
	sp, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 2, 30, 0, 0, time.UTC) // Wednesday 25th, 23:30 in São Paulo
	for _, tc := range []struct{ period, want string }{
		{"day", "day:2026-11-25"}, {"week", "week:2026-11-23"}, {"month", "month:2026-11-01"},
	} {
		if got := PeriodBudgetKey(tc.period, at, sp); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.period, got, tc.want)
		}
	}
	sunday := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	if got := PeriodBudgetKey("week", sunday, time.UTC); got != "week:2026-11-23" {
		t.Errorf("a Sunday's week: %s", got)
	}
}
