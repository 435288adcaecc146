package app_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestBringUpMakesOneFirstKey: processes bringing up one new database at
// the same instant make one signing key between them, and bringing it up
// again makes none.
func TestBringUpMakesOneFirstKey(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			u := storagetest.URL(t, d, true)
			const processes = 8
			apps := make([]*app.App, processes)
			for i := range apps {
				db, err := storage.Open(ctx, u)
				require.NoError(t, err)
				t.Cleanup(func() { db.Close() })
				apps[i] = app.New(&app.Config{DB: db, Log: slog.New(slog.DiscardHandler), Auth: auth.NewService(db.Ent, "http://x", "x")})
			}
			errs := make([]error, processes)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i, a := range apps {
				wg.Go(func() {
					<-start
					errs[i] = a.BringUp(ctx)
				})
			}
			close(start)
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}
			require.NoError(t, apps[0].BringUp(ctx))
			n, err := apps[0].DB.Ent.SigningKey.Query().Count(viewer.SystemContext(ctx))
			require.NoError(t, err)
			require.Equal(t, 1, n)
		})
	}
}
