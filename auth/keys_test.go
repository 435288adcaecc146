package auth

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

func TestKeysReloadForUnknownKids(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		one, other := NewKeys(db.Ent), NewKeys(db.Ent)
		first, err := one.Signing(ctx)
		require.NoError(t, err)

		// The other process has just loaded the keys when the first rotates.
		_, found, err := other.lookup(ctx, first.KeyID)
		require.NoError(t, err)
		require.True(t, found)
		newKid, err := one.Rotate(ctx)
		require.NoError(t, err)
		key, found, err := other.lookup(ctx, newKid)
		require.NoError(t, err)
		require.True(t, found, "a key created since the last load is found at once")
		require.Equal(t, newKid, key.KeyID)

		// Made-up kids never reach the database.
		start := time.Now()
		for _, kid := range []string{"", "evil", "key_", "key_notaulid", "cli_01jd0000000000000000000000"} {
			_, found, err := other.lookup(ctx, kid)
			require.NoError(t, err)
			require.False(t, found, kid)
		}
		require.Less(t, time.Since(start), 100*time.Millisecond)

		// A flood of plausible unknown kids shares reloads instead of
		// queueing a second each.
		start = time.Now()
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				_, found, err := other.lookup(ctx, pid.New(pid.SigningKey))
				assert.NoError(t, err)
				assert.False(t, found)
			})
		}
		wg.Wait()
		require.Less(t, time.Since(start), 2500*time.Millisecond)

		// A caller that gives up stops waiting.
		other.invalidate()
		require.NoError(t, other.refresh(ctx, false)) // a fresh load: the next reload must wait
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, _, err = other.lookup(short, pid.New(pid.SigningKey))
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}
