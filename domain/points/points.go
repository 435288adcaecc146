// Package points holds the arithmetic of loyalty points: how many an order
// earns, which level a customer's earnings reach, and which lots a debit
// spends. It touches no database.
package points

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// Earned is the points an order of amount R$ earns at rate points per whole
// R$ 1, rounded down: R$ 10.99 at 1 point per real earns 10.
func Earned(amount, rate decimal.Decimal) int64 {
	if amount.IsNegative() || rate.IsNegative() {
		return 0
	}
	return amount.Mul(rate).Floor().IntPart()
}

// Level is a loyalty level, in ascending order.
type Level string

const (
	Bronze  Level = "bronze"
	Silver  Level = "silver"
	Gold    Level = "gold"
	Diamond Level = "diamond"
)

// Levels lists the levels from lowest to highest.
var Levels = []Level{Bronze, Silver, Gold, Diamond}

// Thresholds are the points earned in the trailing 12 months a level needs.
type Thresholds struct {
	Silver, Gold, Diamond int64
}

// Of is the points level l needs.
func (t Thresholds) Of(l Level) int64 {
	switch l {
	case Silver:
		return t.Silver
	case Gold:
		return t.Gold
	case Diamond:
		return t.Diamond
	case Bronze:
	}
	return 0
}

// LevelFor is the highest level whose threshold earned reaches.
func (t Thresholds) LevelFor(earned int64) Level {
	level := Bronze
	for _, l := range Levels[1:] {
		if earned >= t.Of(l) {
			level = l
		}
	}
	return level
}

// Next returns the level above the one earned reaches and the points still
// missing for it; ok is false at the top level.
func (t Thresholds) Next(earned int64) (next Level, missing int64, ok bool) {
	current := t.LevelFor(earned)
	for i, l := range Levels {
		if l == current && i+1 < len(Levels) {
			next = Levels[i+1]
			return next, t.Of(next) - earned, true
		}
	}
	return "", 0, false
}

// Rank orders levels: a change to a higher rank is an upgrade.
func Rank(l Level) int {
	for i, x := range Levels {
		if x == l {
			return i
		}
	}
	return -1
}

// Lot is the part of a credit not yet spent or expired.
type Lot struct {
	ID        string
	Remaining int64
	ExpiresAt time.Time
}

// Take is how many points a debit takes from one lot.
type Take struct {
	LotID  string
	Points int64
}

// ErrInsufficient is a debit larger than the lots hold.
var ErrInsufficient = errors.New("insufficient points")

// Spend takes amount points from lots, those expiring first first (ties by
// id, the order of crediting). lots must be live (unexpired, remaining > 0).
func Spend(lots []Lot, amount int64) ([]Take, error) {
	if amount <= 0 {
		return nil, errors.New("amount must be positive")
	}
	ordered := append([]Lot(nil), lots...)
	sortLots(ordered)
	var takes []Take
	left := amount
	for _, l := range ordered {
		if left == 0 {
			break
		}
		n := min(l.Remaining, left)
		if n <= 0 {
			continue
		}
		takes = append(takes, Take{LotID: l.ID, Points: n})
		left -= n
	}
	if left > 0 {
		return nil, ErrInsufficient
	}
	return takes, nil
}

func sortLots(lots []Lot) {
	// Insertion sort: a customer has few live lots, and the order must be
	// total and stable for the model test.
	for i := 1; i < len(lots); i++ {
		for j := i; j > 0 && lotBefore(lots[j], lots[j-1]); j-- {
			lots[j], lots[j-1] = lots[j-1], lots[j]
		}
	}
}

func lotBefore(a, b Lot) bool {
	if !a.ExpiresAt.Equal(b.ExpiresAt) {
		return a.ExpiresAt.Before(b.ExpiresAt)
	}
	return a.ID < b.ID
}

// The programme's calendar: its days are those of the tenant's time zone,
// and its instants (expiry, release of pending points, the start of the
// level window) are that zone's midnights, so a customer keeps points
// through the whole last day whatever hour they were credited at.

// Zone is the programme time zone named name: an IANA name, never the
// machine's own ("Local") nor empty.
func Zone(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	// time.LoadLocation reads and parses the zone's file at every call:
	// a sale's processing asks several times.
	loc, err := time.LoadLocation(name)
	if err == nil {
		zones.Store(name, loc)
	}
	return loc, err
}

// zones are the zones loaded, by name.
var zones sync.Map

// midnight is the start of the day of t in loc, moved by months and days.
func midnight(t time.Time, loc *time.Location, months, days int) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m+time.Month(months), d+days, 0, 0, 0, 0, loc)
}

// ExpiresAt is when points credited at t expire after months: the midnight
// in loc that ends the day of t, months later.
func ExpiresAt(t time.Time, months int, loc *time.Location) time.Time {
	return midnight(t, loc, months, 1).UTC()
}

// DaysAfter is the midnight in loc that starts the day days after t's: when
// points earned at t become spendable after a pending period, or when a
// level's downgrade grace that began at t ends. Zero days is t itself.
func DaysAfter(t time.Time, days int, loc *time.Location) time.Time {
	if days == 0 {
		return t
	}
	return midnight(t, loc, 0, days).UTC()
}

// LevelWindowStart is the start of the 12 months whose earned points make
// a level at now: the midnight in loc that starts the same day a year ago.
func LevelWindowStart(now time.Time, loc *time.Location) time.Time {
	return midnight(now, loc, -12, 0).UTC()
}
