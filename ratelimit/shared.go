package ratelimit

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// Counter counts requests per key: a Limiter in this process's memory, or
// Shared in PostgreSQL, shared by every process of the database.
type Counter interface {
	// Allow counts one request of key against q and says whether it may go
	// on.
	Allow(key string, q Quota) Decision
	// Peek says whether a request of key would be allowed now, without
	// counting one.
	Peek(key string, q Quota) Decision
	// AllowAll counts one request against each of keys, all or none; undo
	// takes it back.
	AllowAll(keys ...Key) (d Decision, undo func())
}

var (
	_ Counter = (*Limiter)(nil)
	_ Counter = (*Shared)(nil)
)

// Shared counts requests per key in PostgreSQL's rate_windows table, so
// that a key's quota holds across every process of the database: each
// request is one upsert of its key's row (the window's end and its count),
// which PostgreSQL applies atomically, so concurrent requests of a key in
// any process are counted exactly. Keys are prefixed with the counter's
// name: counters of different names never meet.
//
// The windows are Limiter's: a key's window starts with its first request
// (on this process's clock, now), and a refused request does not move it.
// The table is UNLOGGED (a crash empties it, which only gives every key a
// fresh window) and the rows of ended windows are deleted now and then.
//
// Should the database fail to answer within sharedTimeout, the request is
// refused for a second (and the failure logged): a quota that gave way
// under load would let a burst through exactly when it matters (400
// concurrent coupon guesses waited past 2 s for the client's row lock and
// 176 were let in), and a request refused while the database is away would
// have met its failure anyway.
type Shared struct {
	db   *sql.DB
	name string
	now  func() time.Time
	log  *slog.Logger

	mu        sync.Mutex
	lastSweep time.Time
}

const (
	// sharedTimeout bounds one count in the database, waits for a
	// connection and for the key's row lock included.
	sharedTimeout = 10 * time.Second
	// unanswered is how long a request refused for want of an answer is
	// told to wait.
	unanswered = time.Second
	// sweepEvery is how often a process deletes ended windows.
	sweepEvery = time.Minute
)

// NewShared returns a counter named name of the PostgreSQL database db,
// reading the time from now (nil: time.Now) and logging failures to log
// (nil: discarded).
func NewShared(db *sql.DB, name string, now func() time.Time, log *slog.Logger) *Shared {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Shared{db: db, name: name, now: now, log: log, lastSweep: now()}
}

// key is the row of key: the counter's name, a zero byte and key (bytes:
// keys hold zero bytes, which PostgreSQL's text refuses).
func (s *Shared) key(key string) []byte {
	return append(append([]byte(s.name), 0), key...)
}

// countSQL counts one request of a key: a new window when there is none or
// it has ended, else one more in it. $1 key, $2 now, $3 the window's end
// should one begin now.
const countSQL = `INSERT INTO rate_windows AS w (key, window_end, count) VALUES ($1, $3, 1)
ON CONFLICT (key) DO UPDATE SET
  count = CASE WHEN w.window_end <= $2 THEN 1 ELSE w.count + 1 END,
  window_end = CASE WHEN w.window_end <= $2 THEN excluded.window_end ELSE w.window_end END
RETURNING count, window_end`

// Allow counts one request of key against q and says whether it may go on.
// A refused request is counted past the limit, which changes nothing: the
// window ends when it would have and nothing remains of it either way.
func (s *Shared) Allow(key string, q Quota) Decision { return s.one(key, q, true) }

// Peek says whether a request of key would be allowed now, and what is left
// of its quota, without counting a request.
func (s *Shared) Peek(key string, q Quota) Decision { return s.one(key, q, false) }

// one is Allow (count) or Peek.
func (s *Shared) one(key string, q Quota, count bool) Decision {
	if q.Off {
		return Decision{Allowed: true}
	}
	limit, span := limitAndSpan(q)
	now := s.now()
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	var n int
	var end time.Time
	var err error
	if count {
		s.sweep(ctx, now)
		err = s.db.QueryRowContext(ctx, countSQL, s.key(key), now, now.Add(span)).Scan(&n, &end)
	} else {
		err = s.db.QueryRowContext(ctx, `SELECT count, window_end FROM rate_windows WHERE key = $1 AND window_end > $2`,
			s.key(key), now).Scan(&n, &end)
	}
	switch {
	case errors.Is(err, sql.ErrNoRows): // Peek of a key without a window
		return Decision{Allowed: true, Limit: limit, Remaining: limit, Reset: span}
	case err != nil:
		return s.unanswered(limit, err)
	}
	if count {
		return decide(limit, n, end.Sub(now), n <= limit)
	}
	return decide(limit, n, end.Sub(now), n < limit)
}

// AllowAll counts one request against each of keys in one transaction: all
// are counted when each has room, none when one is full (whose decision is
// returned). undo takes the request back from each key's window, unless
// that window has ended meanwhile.
func (s *Shared) AllowAll(keys ...Key) (Decision, func()) {
	keys = slices.DeleteFunc(slices.Clone(keys), func(k Key) bool { return k.Quota.Off })
	// The same order in every transaction: two that count the same keys
	// wait for each other instead of deadlocking.
	slices.SortFunc(keys, func(a, b Key) int { return strings.Compare(a.Name, b.Name) })
	now := s.now()
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	s.sweep(ctx, now)
	type counted struct {
		key []byte
		end time.Time
	}
	var taken []counted
	refused, err := func() (*Decision, error) {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return nil, err
		}
		defer func() { _ = tx.Rollback() }()
		for _, k := range keys {
			limit, span := limitAndSpan(k.Quota)
			var count int
			var end time.Time
			if err := tx.QueryRowContext(ctx, countSQL, s.key(k.Name), now, now.Add(span)).Scan(&count, &end); err != nil {
				return nil, err
			}
			if count > limit {
				d := decide(limit, count, end.Sub(now), false)
				return &d, nil // rolled back: none is counted
			}
			taken = append(taken, counted{s.key(k.Name), end})
		}
		return nil, tx.Commit()
	}()
	switch {
	case err != nil:
		return s.unanswered(0, err), func() {}
	case refused != nil:
		return *refused, func() {}
	}
	return Decision{Allowed: true}, func() {
		ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
		defer cancel()
		for _, c := range taken {
			if _, err := s.db.ExecContext(ctx, `UPDATE rate_windows SET count = count - 1 WHERE key = $1 AND window_end = $2 AND count > 0`,
				c.key, c.end); err != nil {
				s.log.Warn("rate limit: giving a request back failed", "counter", s.name, "error", err)
			}
		}
	}
}

// unanswered decides a request the database did not count, and logs why:
// one that waited past sharedTimeout is refused (a burst queued on the
// key's row), one the database failed goes on to meet the failure itself
// (503 where the request needs the database).
func (s *Shared) unanswered(limit int, err error) Decision {
	if !errors.Is(err, context.DeadlineExceeded) {
		s.log.Warn("rate limit: the database failed to count the request; it goes on", "counter", s.name, "error", err)
		return Decision{Allowed: true, Limit: limit, Remaining: limit}
	}
	s.log.Warn("rate limit: the database did not count the request in time; it is refused", "counter", s.name, "error", err)
	return Decision{Limit: limit, Reset: unanswered, RetryAfter: unanswered}
}

// sweep deletes, at most once per sweepEvery in this process, the rows of
// the windows that ended more than a sweepEvery ago: one statement a
// minute, which the request that finds it due runs.
func (s *Shared) sweep(ctx context.Context, now time.Time) {
	s.mu.Lock()
	due := now.Sub(s.lastSweep) >= sweepEvery
	if due {
		s.lastSweep = now
	}
	s.mu.Unlock()
	if !due {
		return
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM rate_windows WHERE window_end < $1`, now.Add(-sweepEvery)); err != nil {
		s.log.Warn("rate limit: deleting ended windows failed", "counter", s.name, "error", err)
	}
}

// limitAndSpan are q's limit and window as Limiter applies them.
func limitAndSpan(q Quota) (int, time.Duration) {
	span := q.Window
	if span <= 0 {
		span = time.Second
	}
	return max(q.Limit, 1), span
}

// decide is the decision of a window of limit holding count requests that
// ends in reset.
func decide(limit, count int, reset time.Duration, allowed bool) Decision {
	d := Decision{Allowed: allowed, Limit: limit, Remaining: max(limit-count, 0), Reset: reset}
	if !allowed {
		d.RetryAfter = reset
	}
	return d
}
