package churn_test

import (
	"bufio"
	"math"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/churn"
)

// cdnowHistories reads the CDNOW sample (testdata/cdnow at the top of the repository) into the 39-week
// calibration histories of the paper: several purchases on one day are one
// transaction, time in weeks.
func cdnowHistories(t *testing.T) []churn.History {
	t.Helper()
	f, err := os.Open("../../testdata/cdnow/cdnow_sample.txt")
	require.NoError(t, err)
	defer f.Close()
	days := map[string]map[time.Time]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Fields(sc.Text())
		require.Len(t, cols, 5)
		d, err := time.Parse("20060102", cols[2])
		require.NoError(t, err)
		if days[cols[0]] == nil {
			days[cols[0]] = map[time.Time]bool{}
		}
		days[cols[0]][d] = true
	}
	require.NoError(t, sc.Err())
	end := time.Date(1997, 9, 30, 0, 0, 0, 0, time.UTC)
	var hs []churn.History
	for _, set := range days {
		var ds []time.Time
		for d := range set {
			if !d.After(end) {
				ds = append(ds, d)
			}
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i].Before(ds[j]) })
		weeks := func(from, to time.Time) float64 { return to.Sub(from).Hours() / 24 / 7 }
		hs = append(hs, churn.History{X: len(ds) - 1, Tx: weeks(ds[0], ds[len(ds)-1]), T: weeks(ds[0], end)})
	}
	return hs
}

func within(t *testing.T, want, got, tolerance float64, what string) {
	t.Helper()
	require.LessOrEqualf(t, math.Abs(got-want)/want, tolerance, "%s: %.5f, published %.5f", what, got, want)
}

// TestBGNBDReproducesThePaper fits the CDNOW sample and compares with the
// published figures (see testdata/cdnow/README.md at the repository's root).
func TestBGNBDReproducesThePaper(t *testing.T) {
	hs := cdnowHistories(t)
	require.Len(t, hs, 2357)
	p, ll, err := churn.Fit(hs)
	require.NoError(t, err)
	t.Logf("r=%.4f α=%.4f a=%.4f b=%.4f LL=%.2f", p.R, p.Alpha, p.A, p.B, ll)
	within(t, 0.243, p.R, 0.01, "r")
	within(t, 4.414, p.Alpha, 0.01, "α")
	within(t, 0.793, p.A, 0.01, "a")
	within(t, 2.426, p.B, 0.01, "b")
	within(t, 9582.4, -ll, 0.0005, "−LL")
	within(t, 1.226, p.ExpectedPurchases(churn.History{X: 2, Tx: 30.43, T: 38.86}, 39), 0.005, "E[Y(39) | 2, 30.43, 38.86]")
	for week, want := range map[float64]float64{1: 0.0532, 3: 0.1506, 32: 1.0437, 78: 1.8576} {
		within(t, want, p.ExpectedPurchasesFromNew(week), 0.005, "E[X(t)]")
	}
}
