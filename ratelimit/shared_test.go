package ratelimit_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// sharedDBs opens n connection pools to one fresh PostgreSQL database, as n
// processes would; it skips without PostgreSQL.
func sharedDBs(tb testing.TB, n int) []*storage.DB {
	tb.Helper()
	if !slices.Contains(storagetest.Dialects(), dialect.Postgres) {
		tb.Skip("ratelimit.Shared counts in PostgreSQL")
	}
	u := storagetest.URL(tb, dialect.Postgres, true)
	dbs := make([]*storage.DB, n)
	for i := range dbs {
		db, err := storage.Open(context.Background(), u)
		require.NoError(tb, err)
		tb.Cleanup(func() { require.NoError(tb, db.Close()) })
		dbs[i] = db
	}
	return dbs
}

// TestSharedIsLimiter: a Shared counter decides as a Limiter does, request
// by request, on the same clock: quota, refusals that do not move the
// window, a fresh window, Peek, AllowAll and its undo.
func TestSharedIsLimiter(t *testing.T) {
	t.Parallel()
	db := sharedDBs(t, 1)[0]
	c := newClock()
	counters := []ratelimit.Counter{ratelimit.New(c.Now, 0), ratelimit.NewShared(db.SQL, "test", c.Now, nil)}
	q := ratelimit.Quota{Limit: 3, Window: time.Minute}
	small := ratelimit.Quota{Limit: 1, Window: time.Minute}
	type step struct {
		advance time.Duration
		do      func(ratelimit.Counter) ratelimit.Decision
	}
	allow := func(key string, q ratelimit.Quota) func(ratelimit.Counter) ratelimit.Decision {
		return func(l ratelimit.Counter) ratelimit.Decision { return l.Allow(key, q) }
	}
	peek := func(key string) func(ratelimit.Counter) ratelimit.Decision {
		return func(l ratelimit.Counter) ratelimit.Decision { return l.Peek(key, q) }
	}
	allowAll := func(undo bool, keys ...ratelimit.Key) func(ratelimit.Counter) ratelimit.Decision {
		return func(l ratelimit.Counter) ratelimit.Decision {
			d, back := l.AllowAll(keys...)
			if undo {
				back()
			}
			return d
		}
	}
	steps := []step{
		{0, peek("a")}, {0, allow("a", q)}, {0, allow("a", q)}, {0, peek("a")}, {0, allow("a", q)},
		{20 * time.Second, allow("a", q)}, {0, allow("a", q)}, {0, peek("a")},
		{40*time.Second - time.Millisecond, allow("a", q)}, {time.Millisecond, allow("a", q)},
		{0, allow("b", q)},
		{0, allowAll(true, ratelimit.Key{Name: "c", Quota: small}, ratelimit.Key{Name: "d", Quota: q})},
		{0, allowAll(false, ratelimit.Key{Name: "c", Quota: small}, ratelimit.Key{Name: "d", Quota: q})},
		{0, allowAll(false, ratelimit.Key{Name: "c", Quota: small}, ratelimit.Key{Name: "d", Quota: q})},
		{0, peek("d")},
		{0, allow("off", ratelimit.Quota{Off: true})},
	}
	for i, s := range steps {
		c.Advance(s.advance)
		want := s.do(counters[0])
		got := s.do(counters[1])
		// PostgreSQL keeps microseconds.
		require.InDelta(t, want.Reset, got.Reset, float64(time.Microsecond), "step %d", i)
		require.InDelta(t, want.RetryAfter, got.RetryAfter, float64(time.Microsecond), "step %d", i)
		want.Reset, got.Reset, want.RetryAfter, got.RetryAfter = 0, 0, 0, 0
		require.Equal(t, want, got, "step %d", i)
	}
}

// TestSharedAcrossProcesses: three processes' counters of one database,
// each sending requests of one key from several goroutines at once, allow
// exactly the quota in all.
func TestSharedAcrossProcesses(t *testing.T) {
	t.Parallel()
	dbs := sharedDBs(t, 3)
	q := ratelimit.Quota{Limit: 100, Window: time.Minute}
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for _, db := range dbs {
		l := ratelimit.NewShared(db.SQL, "test", nil, nil)
		for range 4 {
			wg.Go(func() {
				for range q.Limit / 2 {
					if l.Allow("client", q).Allowed {
						allowed.Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	require.Equal(t, int64(q.Limit), allowed.Load(), "%d requests sent", 3*4*q.Limit/2)
}

// BenchmarkAllow is the cost of counting one request: in memory, and in
// PostgreSQL (one upsert) for one key and for a key per request.
func BenchmarkAllow(b *testing.B) {
	q := ratelimit.Quota{Limit: 1_000_000_000, Window: time.Minute}
	run := func(b *testing.B, l ratelimit.Counter, keys int) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				i++
				if !l.Allow(fmt.Sprint(i%keys), q).Allowed {
					b.Fatal("refused")
				}
			}
		})
	}
	b.Run("memory", func(b *testing.B) { run(b, ratelimit.New(nil, 0), 1) })
	db := sharedDBs(b, 1)[0]
	b.Run("postgres/one-key", func(b *testing.B) { run(b, ratelimit.NewShared(db.SQL, "bench", nil, nil), 1) })
	b.Run("postgres/many-keys", func(b *testing.B) { run(b, ratelimit.NewShared(db.SQL, "bench", nil, nil), 10_000) })
}
