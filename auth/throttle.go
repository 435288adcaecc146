package auth

import (
	"time"

	"github.com/fideliza/fideliza/ratelimit"
)

// Failed client authentications are throttled per client id: after
// maxFailures failures within failureWindow (from the first), the id is
// refused until the window ends, whatever the secret. The failures are
// counted by a ratelimit.Counter: in this process's memory unless
// CountFailuresIn gives another (PostgreSQL's, shared by every process).
const (
	maxFailures    = 5
	failureWindow  = time.Minute
	maxTrackedIDs  = 10_000
	lockoutMessage = "too many failed attempts for this client; retry later"
)

var failureQuota = ratelimit.Quota{Limit: maxFailures, Window: failureWindow}

type throttle struct{ failures ratelimit.Counter }

func newThrottle() throttle { return throttle{failures: ratelimit.New(nil, maxTrackedIDs)} }

// retryAfter returns how long id is still locked out, or 0.
func (t throttle) retryAfter(id string) time.Duration {
	d := t.failures.Peek(id, failureQuota)
	if d.Allowed {
		return 0
	}
	return max(d.RetryAfter, time.Second)
}

// fail records a failed attempt of id.
func (t throttle) fail(id string) { t.failures.Allow(id, failureQuota) }

// CountFailuresIn has s count failed client authentications in c, so that
// a client id's lockout holds across every process that shares c.
func (s *Service) CountFailuresIn(c ratelimit.Counter) { s.throttle = throttle{failures: c} }
