// Package ratelimit counts requests per key in fixed windows: a key may make
// Quota.Limit requests in the Quota.Window that starts with its first
// request, then none until that window ends. It knows nothing of HTTP: the
// rest package picks the keys (a client of a tenant, an IP address) and the
// quota of each.
//
// A Limiter keeps the counts in this process's memory; Shared keeps them in
// PostgreSQL, so that a key's quota holds across every process of the
// database.
package ratelimit

import (
	"sync"
	"time"
)

// Quota is how many requests a key may make per window.
type Quota struct {
	Limit  int
	Window time.Duration
	// Off means no limit at all: every request is allowed and no headers
	// describe it.
	Off bool
}

// IsZero reports whether q is unset (and its default applies).
func (q Quota) IsZero() bool { return q == Quota{} }

// Decision is the outcome of one request of a key.
type Decision struct {
	Allowed bool
	// Limit and Remaining are the quota and what is left of it in the
	// current window, after this request.
	Limit, Remaining int
	// Reset is the time until the current window ends and the quota is
	// whole again.
	Reset time.Duration
	// RetryAfter is how long to wait before a request may succeed: 0 when
	// allowed, Reset when refused.
	RetryAfter time.Duration
}

// DefaultMaxKeys bounds the keys a Limiter tracks when MaxKeys is unset.
const DefaultMaxKeys = 100_000

// Limiter counts requests per key. Its zero value is not ready: use New.
// It is safe for concurrent use.
type Limiter struct {
	now     func() time.Time
	maxKeys int

	mu        sync.Mutex
	windows   map[string]*window
	lastSweep time.Time
	// longest is the longest window seen, how long a key must have been
	// idle before a sweep may forget it.
	longest time.Duration
}

type window struct {
	end   time.Time
	count int
}

// New returns a limiter reading the time from now (nil: time.Now) and
// tracking at most maxKeys keys (0: DefaultMaxKeys).
func New(now func() time.Time, maxKeys int) *Limiter {
	if now == nil {
		now = time.Now
	}
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	return &Limiter{now: now, maxKeys: maxKeys, windows: map[string]*window{}}
}

// Allow counts one request of key against q and says whether it may go on.
// A refused request is not counted: the window ends when it would have.
func (l *Limiter) Allow(key string, q Quota) Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.take(key, q, true)
}

// Peek says whether a request of key would be allowed now, and what is left
// of its quota, without counting a request.
func (l *Limiter) Peek(key string, q Quota) Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.take(key, q, false)
}

// take is Allow (count) or Peek with l.mu held.
func (l *Limiter) take(key string, q Quota, count bool) Decision {
	if q.Off {
		return Decision{Allowed: true}
	}
	limit, span := max(q.Limit, 1), q.Window
	if span <= 0 {
		span = time.Second
	}
	now := l.now()
	l.longest = max(l.longest, span)
	l.sweep(now)
	w := l.windows[key]
	if w == nil || !now.Before(w.end) {
		if !count {
			return Decision{Allowed: true, Limit: limit, Remaining: limit, Reset: span}
		}
		if w == nil {
			l.makeRoom()
			w = &window{}
			l.windows[key] = w
		}
		*w = window{end: now.Add(span)}
	}
	d := Decision{Limit: limit, Reset: w.end.Sub(now)}
	if count && w.count < limit {
		w.count++
		d.Allowed = true
	} else if !count {
		d.Allowed = w.count < limit
	}
	d.Remaining = max(limit-w.count, 0)
	if !d.Allowed {
		d.RetryAfter = d.Reset
	}
	return d
}

// sweep forgets, at most once per longest window, the keys whose window has
// ended: an idle key costs memory for at most two windows.
func (l *Limiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < l.longest && len(l.windows) < l.maxKeys {
		return
	}
	l.lastSweep = now
	for k, w := range l.windows {
		if !now.Before(w.end) {
			delete(l.windows, k)
		}
	}
}

// makeRoom is called before a new key is added. When every tracked key is
// in a live window (a spray of keys), it forgets an eighth of them, chosen
// by map order (at random): those keys start a fresh window, which lets them
// through early rather than let memory grow without bound.
func (l *Limiter) makeRoom() {
	if len(l.windows) < l.maxKeys {
		return
	}
	drop := max(l.maxKeys/8, 1)
	for k := range l.windows {
		if drop == 0 {
			break
		}
		delete(l.windows, k)
		drop--
	}
}

// Len returns how many keys the limiter tracks.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.windows)
}

// Key is a key and the quota it is counted against.
type Key struct {
	Name  string
	Quota Quota
}

// AllowAll counts one request against each of keys, atomically: all are
// counted when each has room (Allowed), none when one is full, whose
// decision is then returned. Checking and counting in one step is what keeps a burst exact:
// a check made apart from the count lets every request of the burst check
// before any counts. undo takes the request back from each key's window,
// unless that window has ended meanwhile (for a request that turned out not
// to count, such as a coupon code that exists).
func (l *Limiter) AllowAll(keys ...Key) (d Decision, undo func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		if d := l.take(k.Name, k.Quota, false); !d.Allowed {
			return d, func() {}
		}
	}
	type counted struct {
		w   *window
		end time.Time
	}
	var taken []counted
	for _, k := range keys {
		if k.Quota.Off {
			continue
		}
		l.take(k.Name, k.Quota, true)
		w := l.windows[k.Name]
		taken = append(taken, counted{w, w.end})
	}
	return Decision{Allowed: true}, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, c := range taken {
			if c.w.end.Equal(c.end) && c.w.count > 0 {
				c.w.count--
			}
		}
	}
}
