package auth

import (
	"sync"
	"time"
)

// Failed client authentications are throttled per client id: after
// maxFailures failures within failureWindow, the id is refused for
// lockout, whatever the secret. The state is per process.
const (
	maxFailures    = 5
	failureWindow  = time.Minute
	lockout        = time.Minute
	maxTrackedIDs  = 10_000
	lockoutMessage = "too many failed attempts for this client; retry later"
)

type failureRecord struct {
	count       int
	windowStart time.Time
	lockedUntil time.Time
}

type throttle struct {
	mu  sync.Mutex
	ids map[string]*failureRecord
	now func() time.Time
}

func newThrottle() *throttle {
	return &throttle{ids: map[string]*failureRecord{}, now: time.Now}
}

// retryAfter returns how long id is still locked out, or 0.
func (t *throttle) retryAfter(id string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r, ok := t.ids[id]; ok {
		if d := r.lockedUntil.Sub(t.now()); d > 0 {
			return d
		}
	}
	return 0
}

// fail records a failed attempt of id.
func (t *throttle) fail(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if len(t.ids) >= maxTrackedIDs {
		t.evict(now)
	}
	r, ok := t.ids[id]
	if !ok || now.Sub(r.windowStart) > failureWindow {
		r = &failureRecord{windowStart: now}
		t.ids[id] = r
	}
	r.count++
	if r.count >= maxFailures {
		r.lockedUntil = now.Add(lockout)
	}
}

// succeed forgets the failures of id.
func (t *throttle) succeed(id string) {
	t.mu.Lock()
	delete(t.ids, id)
	t.mu.Unlock()
}

// evict drops records that no longer matter; if every record is live (a
// spray of client ids), it drops them all rather than grow without bound.
func (t *throttle) evict(now time.Time) {
	for id, r := range t.ids {
		if now.Sub(r.windowStart) > failureWindow && now.After(r.lockedUntil) {
			delete(t.ids, id)
		}
	}
	if len(t.ids) >= maxTrackedIDs {
		clear(t.ids)
	}
}
