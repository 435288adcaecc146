package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestMigrateMakesTheFirstSigningKey: processes migrating a new database at
// once leave one signing key, and the JWK Set serve publishes holds it
// before any token is issued (a verifier may fetch the set first).
func TestMigrateMakesTheFirstSigningKey(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			u := storagetest.URL(t, d, false)
			const processes = 4
			errs := make([]error, processes)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range processes {
				cmd := newRootCommand(io.Discard, io.Discard)
				cmd.SetArgs([]string{"--database-url", u, "migrate"})
				wg.Go(func() {
					<-start
					errs[i] = cmd.ExecuteContext(context.Background())
				})
			}
			close(start)
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}

			base, _ := startServe(t, &syncBuffer{}, u, "--no-worker")
			resp, err := http.Get(base + "/.well-known/jwks.json")
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			var set struct {
				Keys []struct {
					Kid string `json:"kid"`
					Alg string `json:"alg"`
				} `json:"keys"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&set))
			require.Len(t, set.Keys, 1, "one key, however many processes started")
			require.Equal(t, "ES256", set.Keys[0].Alg)
		})
	}
}
