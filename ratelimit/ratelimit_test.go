package ratelimit_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/testclock"
)

func newClock() *testclock.Clock { return testclock.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)) }

func TestExactQuotaThenRefusedThenReset(t *testing.T) {
	c := newClock()
	l := ratelimit.New(c.Now, 0)
	q := ratelimit.Quota{Limit: 3, Window: time.Minute}

	for i := 1; i <= 3; i++ {
		d := l.Allow("a", q)
		require.True(t, d.Allowed, "request %d", i)
		require.Equal(t, 3, d.Limit)
		require.Equal(t, 3-i, d.Remaining)
		require.Equal(t, time.Minute, d.Reset, "the clock did not move")
		require.Zero(t, d.RetryAfter)
	}
	c.Advance(20 * time.Second)
	for range 3 { // refusals do not push the window further
		d := l.Allow("a", q)
		require.False(t, d.Allowed)
		require.Equal(t, 0, d.Remaining)
		require.Equal(t, 40*time.Second, d.Reset)
		require.Equal(t, 40*time.Second, d.RetryAfter)
	}
	c.Advance(40*time.Second - time.Nanosecond)
	require.False(t, l.Allow("a", q).Allowed, "one nanosecond before the window ends")
	c.Advance(time.Nanosecond)
	d := l.Allow("a", q)
	require.True(t, d.Allowed, "a new window")
	require.Equal(t, 2, d.Remaining)
	require.Equal(t, time.Minute, d.Reset)
}

func TestKeysAreIndependent(t *testing.T) {
	c := newClock()
	l := ratelimit.New(c.Now, 0)
	q := ratelimit.Quota{Limit: 2, Window: time.Second}
	for range 10 {
		l.Allow("flood", q)
	}
	require.False(t, l.Allow("flood", q).Allowed)
	d := l.Allow("quiet", q)
	require.True(t, d.Allowed)
	require.Equal(t, 1, d.Remaining)
}

func TestTheQuotaOfTheCallApplies(t *testing.T) {
	c := newClock()
	l := ratelimit.New(c.Now, 0)
	small := ratelimit.Quota{Limit: 1, Window: time.Minute}
	big := ratelimit.Quota{Limit: 5, Window: time.Minute}
	require.True(t, l.Allow("a", small).Allowed)
	require.False(t, l.Allow("a", small).Allowed)
	d := l.Allow("a", big)
	require.True(t, d.Allowed, "a larger quota for the same key lets it on")
	require.Equal(t, 3, d.Remaining)
}

func TestPeekDoesNotCount(t *testing.T) {
	c := newClock()
	l := ratelimit.New(c.Now, 0)
	q := ratelimit.Quota{Limit: 2, Window: time.Minute}
	for range 5 {
		d := l.Peek("a", q)
		require.True(t, d.Allowed)
		require.Equal(t, 2, d.Remaining)
	}
	require.Zero(t, l.Len(), "peeking tracks nothing")
	l.Allow("a", q)
	c.Advance(10 * time.Second)
	d := l.Peek("a", q)
	require.True(t, d.Allowed)
	require.Equal(t, 1, d.Remaining)
	require.Equal(t, 50*time.Second, d.Reset)
	l.Allow("a", q)
	d = l.Peek("a", q)
	require.False(t, d.Allowed)
	require.Equal(t, 0, d.Remaining)
	require.Equal(t, 50*time.Second, d.RetryAfter)
}

func TestOffAllowsEverything(t *testing.T) {
	l := ratelimit.New(nil, 0)
	for range 1000 {
		require.True(t, l.Allow("a", ratelimit.Quota{Off: true}).Allowed)
	}
	require.Zero(t, l.Len())
}

func TestIdleKeysAreForgotten(t *testing.T) {
	c := newClock()
	l := ratelimit.New(c.Now, 0)
	q := ratelimit.Quota{Limit: 5, Window: time.Minute}
	for i := range 1000 {
		l.Allow(fmt.Sprint("ip-", i), q)
	}
	require.Equal(t, 1000, l.Len())
	c.Advance(30 * time.Second)
	l.Allow("late", q)
	require.Equal(t, 1001, l.Len(), "windows still running are kept")
	c.Advance(31 * time.Second)
	l.Allow("later", q)
	require.Equal(t, 2, l.Len(), "a sweep forgets the ended windows")
}

func TestMemoryIsBounded(t *testing.T) {
	c := newClock()
	l := ratelimit.New(c.Now, 100)
	q := ratelimit.Quota{Limit: 5, Window: time.Hour}
	for i := range 10_000 {
		l.Allow(fmt.Sprint("spray-", i), q)
		require.LessOrEqual(t, l.Len(), 100)
	}
	// Ended windows go first: a key tracked now survives a spray of keys
	// after its neighbours' windows ended.
	c.Advance(time.Hour)
	short := ratelimit.Quota{Limit: 1, Window: 2 * time.Hour}
	require.True(t, l.Allow("kept", short).Allowed)
	for i := range 80 {
		l.Allow(fmt.Sprint("new-", i), q)
	}
	require.False(t, l.Allow("kept", short).Allowed, "a live window is kept while there is room")
}

// TestConcurrentExactQuota: under contention exactly Limit requests of a key
// pass per window.
func TestConcurrentExactQuota(t *testing.T) {
	c := newClock()
	l := ratelimit.New(c.Now, 0)
	q := ratelimit.Quota{Limit: 100, Window: time.Minute}
	for window := range 3 {
		var allowed atomic.Int64
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					if l.Allow("shared", q).Allowed {
						allowed.Add(1)
					}
					l.Allow(fmt.Sprint("own-", g), q) // other keys meanwhile
				}
			}()
		}
		wg.Wait()
		require.EqualValues(t, 100, allowed.Load(), "window %d: 800 attempts, exactly the quota passes", window)
		c.Advance(time.Minute)
	}
}

func TestParseQuota(t *testing.T) {
	for in, want := range map[string]ratelimit.Quota{
		"600/1m":    {Limit: 600, Window: time.Minute},
		" 20 / 30s": {Limit: 20, Window: 30 * time.Second},
		"10/s":      {Limit: 10, Window: time.Second},
		"5000/h":    {Limit: 5000, Window: time.Hour},
		"1/24h":     {Limit: 1, Window: 24 * time.Hour},
		"100/1m30s": {Limit: 100, Window: 90 * time.Second},
		"off":       {Off: true},
		"OFF":       {Off: true},
	} {
		got, err := ratelimit.ParseQuota(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
		again, err := ratelimit.ParseQuota(got.String())
		require.NoError(t, err, got.String())
		require.Equal(t, got, again, "String writes what ParseQuota reads")
	}
	for in, why := range map[string]string{
		"":          "want <requests>/<window>",
		"600":       "want <requests>/<window>",
		"0/1m":      "whole number from 1",
		"-5/1m":     "whole number from 1",
		"x/1m":      "whole number from 1",
		"1.5/1m":    "whole number from 1",
		"10/":       "must be a duration",
		"10/fortn":  "must be a duration",
		"10/500ms":  "at least 1s",
		"10/1500ms": "whole number of seconds",
		"10/25h":    "at most 24h",
		"10/-1m":    "must be a duration",
	} {
		_, err := ratelimit.ParseQuota(in)
		require.ErrorContains(t, err, why, "%q", in)
		require.ErrorContains(t, err, fmt.Sprintf("%q", in), "the message quotes the value")
	}
	require.Equal(t, "600/1m", ratelimit.Quota{Limit: 600, Window: time.Minute}.String())
	require.Equal(t, "5/90s", ratelimit.Quota{Limit: 5, Window: 90 * time.Second}.String())
}

func TestParseTenantQuotas(t *testing.T) {
	const a, b = "3f0c8d7e-1b2a-4c5d-8e9f-0a1b2c3d4e5f", "9b2f5a3e-0c1d-4e7f-8a9b-0c1d2e3f4a5b"
	got, err := ratelimit.ParseTenantQuotas([]string{a + "=1200/1m, " + "9B2F5A3E-0C1D-4E7F-8A9B-0C1D2E3F4A5B=off", ""})
	require.NoError(t, err)
	require.Equal(t, map[string]ratelimit.Quota{
		a: {Limit: 1200, Window: time.Minute},
		b: {Off: true},
	}, got)

	for in, why := range map[string]string{
		a:                        "want <tenant-uuid>=",
		"acme=10/1m":             "is not a tenant id",
		"{" + a + "}=10/1m":      "is not a tenant id",
		a + "=10":                "tenant " + a + `: rate limit "10"`,
		a + "=1/m," + a + "=2/m": "given twice",
	} {
		_, err := ratelimit.ParseTenantQuotas([]string{in})
		require.ErrorContains(t, err, why, in)
	}
}

func TestConfigQuotas(t *testing.T) {
	const tenant = "3f0c8d7e-1b2a-4c5d-8e9f-0a1b2c3d4e5f"
	var zero ratelimit.Config
	require.Equal(t, ratelimit.DefaultQuota, zero.ClientQuota(tenant))
	require.Equal(t, ratelimit.DefaultTokenQuota, zero.TokenQuota())
	require.Equal(t, ratelimit.DefaultAuthFailureQuota, zero.AuthFailureQuota())

	big := ratelimit.Quota{Limit: 1200, Window: time.Minute}
	small := ratelimit.Quota{Limit: 60, Window: time.Minute}
	c := ratelimit.Config{Default: small, Tenants: map[string]ratelimit.Quota{tenant: big}}
	require.Equal(t, big, c.ClientQuota(tenant))
	require.Equal(t, big, c.ClientQuota("3F0C8D7E-1B2A-4C5D-8E9F-0A1B2C3D4E5F"))
	require.Equal(t, small, c.ClientQuota("9b2f5a3e-0c1d-4e7f-8a9b-0c1d2e3f4a5b"))

	off := ratelimit.Unlimited()
	require.True(t, off.ClientQuota(tenant).Off)
	require.True(t, off.TokenQuota().Off)
	require.True(t, off.AuthFailureQuota().Off)
}

// TestAllowAll: several keys are counted together or not at all, a burst
// of them is exact, and undo gives a request back within its window only.
func TestAllowAll(t *testing.T) {
	c := newClock()
	l := ratelimit.New(c.Now, 0)
	small := ratelimit.Key{Name: "customer", Quota: ratelimit.Quota{Limit: 2, Window: time.Minute}}
	big := ratelimit.Key{Name: "client", Quota: ratelimit.Quota{Limit: 100, Window: time.Minute}}

	for range 2 {
		d, _ := l.AllowAll(small, big)
		require.True(t, d.Allowed)
	}
	d, _ := l.AllowAll(small, big)
	require.False(t, d.Allowed)
	require.Equal(t, time.Minute, d.RetryAfter)
	require.Equal(t, 98, l.Peek(big.Name, big.Quota).Remaining, "a refusal counts against no key")

	var allowed atomic.Int32
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Go(func() {
			if d, _ := l.AllowAll(ratelimit.Key{Name: fmt.Sprint("customer-", i), Quota: small.Quota}, big); d.Allowed {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	require.EqualValues(t, 98, allowed.Load())

	c.Advance(time.Minute)
	d, undo := l.AllowAll(small, big)
	require.True(t, d.Allowed)
	undo()
	require.Equal(t, 100, l.Peek(big.Name, big.Quota).Remaining, "given back")
	_, undo = l.AllowAll(small, big)
	c.Advance(time.Minute)
	l.Allow(big.Name, big.Quota)
	undo()
	require.Equal(t, 99, l.Peek(big.Name, big.Quota).Remaining, "not given back to the next window")
}
