// Package points holds the arithmetic of loyalty points: how many an order
// earns, which level a customer's earnings reach, and which lots a debit
// spends. It touches no database.
package points

import (
	"errors"
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

func (t Thresholds) of(l Level) int64 {
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
		if earned >= t.of(l) {
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
			return next, t.of(next) - earned, true
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

// ExpiresAt is when points credited at t expire after months.
func ExpiresAt(t time.Time, months int) time.Time {
	return t.AddDate(0, months, 0)
}
