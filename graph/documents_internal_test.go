package graph

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAPQCacheBounds: the cache of automatic persisted queries keeps at
// most apqEntries documents and apqBytes bytes, dropping the least
// recently used first.
func TestAPQCacheBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		docBytes  int
		documents int
	}{
		{"many small documents", 100, apqEntries + 10},
		{"fewer large documents", 256 << 10, 40},
	} {
		c := newAPQCache()
		for i := range tc.documents {
			c.Add(ctx, fmt.Sprint("hash", i), strings.Repeat("x", tc.docBytes))
			if i == 0 {
				continue
			}
			_, ok := c.Get(ctx, "hash0") // the first stays the most recently used
			require.True(t, ok, "%s: the document read last is kept", tc.name)
		}
		require.LessOrEqual(t, c.lru.Len(), apqEntries, tc.name)
		require.LessOrEqual(t, c.bytes, apqBytes, tc.name)
		_, ok := c.Get(ctx, fmt.Sprint("hash", tc.documents-1))
		require.True(t, ok, "%s: the newest is kept", tc.name)
		_, ok = c.Get(ctx, "hash1")
		require.False(t, ok, "%s: the least recently used went first", tc.name)
	}
}
