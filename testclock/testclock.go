// Package testclock is the clock tests give the application (App.Clock),
// the rate limits and River, and the living demo plays its year on: time
// passes only when its owner says so. Safe for concurrent use.
package testclock

import (
	"sync"
	"time"
)

// Clock is a settable clock.
type Clock struct {
	mu    sync.Mutex
	t     time.Time
	round time.Duration  // 0: to the nanosecond
	loc   *time.Location // nil: as set
}

// New returns a clock at t, exact to the nanosecond.
func New(t time.Time) *Clock { return &Clock{t: t} }

// NewStored returns a clock at t that keeps the microseconds both databases
// store, so what a test compares reads back equal. With loc it answers in
// that zone: a path that forgets to store UTC shows as a mismatch on
// SQLite, where times are text.
func NewStored(t time.Time, loc *time.Location) *Clock {
	return &Clock{t: t.Truncate(time.Microsecond), round: time.Microsecond, loc: loc}
}

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loc != nil {
		return c.t.In(c.loc)
	}
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t.Truncate(c.round)
}

// Advance moves the clock d on.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d).Truncate(c.round)
}
