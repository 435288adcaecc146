package points

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

func TestEarned(t *testing.T) {
	t.Parallel()
	d := decimal.RequireFromString
	cases := []struct {
		amount, rate string
		want         int64
	}{
		{"10.99", "1", 10},
		{"10.00", "1", 10},
		{"0.99", "1", 0},
		{"100", "1.5", 150},
		{"10.99", "1.5", 16},
		{"1234.56", "0.1", 123},
		{"0", "1", 0},
		{"-5", "1", 0},
		{"99999999.99", "2", 199999999},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, Earned(d(tc.amount), d(tc.rate)), "%s × %s", tc.amount, tc.rate)
	}
}

func TestLevels(t *testing.T) {
	t.Parallel()
	th := Thresholds{Silver: 1000, Gold: 5000, Diamond: 20000}
	cases := []struct {
		earned  int64
		level   Level
		next    Level
		missing int64
		top     bool
	}{
		{0, Bronze, Silver, 1000, false},
		{999, Bronze, Silver, 1, false},
		{1000, Silver, Gold, 4000, false},
		{4999, Silver, Gold, 1, false},
		{5000, Gold, Diamond, 15000, false},
		{20000, Diamond, "", 0, true},
		{1 << 40, Diamond, "", 0, true},
	}
	for _, tc := range cases {
		require.Equal(t, tc.level, th.LevelFor(tc.earned), "%d", tc.earned)
		next, missing, ok := th.Next(tc.earned)
		require.Equal(t, !tc.top, ok)
		require.Equal(t, tc.next, next)
		require.Equal(t, tc.missing, missing)
	}
	require.Less(t, Rank(Silver), Rank(Gold))
}

func TestSpend(t *testing.T) {
	t.Parallel()
	day := func(n int) time.Time { return time.Date(2026, 1, n, 0, 0, 0, 0, time.UTC) }
	lots := []Lot{
		{ID: "lot_c", Remaining: 50, ExpiresAt: day(3)},
		{ID: "lot_a", Remaining: 30, ExpiresAt: day(1)},
		{ID: "lot_b", Remaining: 20, ExpiresAt: day(1)},
	}
	cases := []struct {
		amount int64
		want   []Take
		err    error
	}{
		{10, []Take{{"lot_a", 10}}, nil},
		{30, []Take{{"lot_a", 30}}, nil},
		{45, []Take{{"lot_a", 30}, {"lot_b", 15}}, nil},
		{100, []Take{{"lot_a", 30}, {"lot_b", 20}, {"lot_c", 50}}, nil},
		{101, nil, ErrInsufficient},
	}
	for _, tc := range cases {
		got, err := Spend(lots, tc.amount)
		require.ErrorIs(t, err, tc.err)
		require.Equal(t, tc.want, got, "spend %d", tc.amount)
	}
	_, err := Spend(lots, 0)
	require.Error(t, err)
	require.Equal(t, "lot_c", lots[0].ID, "Spend must not reorder the caller's slice")
}

// TestProgrammeCalendar: expiry, release and the level window fall on the
// programme zone's midnights, across month ends, leap days and a change of
// daylight saving time.
func TestProgrammeCalendar(t *testing.T) {
	zone := func(name string) *time.Location {
		loc, err := Zone(name)
		require.NoError(t, err)
		return loc
	}
	sp, ny, tokyo := zone("America/Sao_Paulo"), zone("America/New_York"), zone("Asia/Tokyo")
	utc := func(s string) time.Time {
		at, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return at
	}
	cases := []struct {
		name    string
		at      time.Time
		loc     *time.Location
		months  int
		expires string
		days    int
		after   string
		window  string
	}{
		{"São Paulo noon", utc("2026-03-10T15:04:05Z"), sp, 12, "2027-03-11T03:00:00Z", 7, "2026-03-17T03:00:00Z", "2025-03-10T03:00:00Z"},
		{"São Paulo before its midnight is the day before", utc("2026-03-11T02:59:59Z"), sp, 1, "2026-04-11T03:00:00Z", 1, "2026-03-11T03:00:00Z", "2025-03-10T03:00:00Z"},
		{"Tokyo is a day ahead of UTC's date", utc("2026-03-10T15:04:05Z"), tokyo, 2, "2026-05-11T15:00:00Z", 0, "2026-03-10T15:04:05Z", "2025-03-10T15:00:00Z"},
		{"a month end normalises", utc("2026-01-31T15:00:00Z"), sp, 1, "2026-03-04T03:00:00Z", 30, "2026-03-02T03:00:00Z", "2025-01-31T03:00:00Z"},
		{"a leap day", utc("2028-02-29T15:00:00Z"), sp, 12, "2029-03-02T03:00:00Z", 1, "2028-03-01T03:00:00Z", "2027-03-01T03:00:00Z"},
		{"New York across daylight saving", utc("2026-03-01T17:00:00Z"), ny, 1, "2026-04-02T04:00:00Z", 14, "2026-03-15T04:00:00Z", "2025-03-01T05:00:00Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.expires, ExpiresAt(c.at, c.months, c.loc).Format(time.RFC3339))
			require.Equal(t, c.after, DaysAfter(c.at, c.days, c.loc).UTC().Format(time.RFC3339))
			require.Equal(t, c.window, LevelWindowStart(c.at, c.loc).Format(time.RFC3339))
		})
	}
	for _, bad := range []string{"", "Local", "America/Atlantis", "../etc/passwd"} {
		_, err := Zone(bad)
		require.Error(t, err, "%q", bad)
	}
}
