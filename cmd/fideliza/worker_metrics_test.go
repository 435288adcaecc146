package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/internal/crashtest"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestWorkerServesMetrics: `fideliza worker --metrics-addr` serves its
// Prometheus metrics (the jobs it works, the business counters) and
// /healthz; without the flag it listens nowhere.
func TestWorkerServesMetrics(t *testing.T) {
	t.Parallel()
	addr := crashtest.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cmd := newRootCommand(io.Discard, io.Discard)
	cmd.SetArgs([]string{"--database-url", storagetest.URL(t, dialect.SQLite, true), "worker", "--metrics-addr", addr})
	go func() { done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done, "the worker stops cleanly")
	})

	get := func(path string) (int, string) {
		res, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	var status int
	var body string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) { // polls until the deadline
		if status, body = get("/healthz"); status == http.StatusOK {
			break
		}
	}
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"status":"ok"}`, body)
	status, body = get("/metrics")
	require.Equal(t, http.StatusOK, status)
	for _, series := range []string{"fideliza_sales_processed_total", "fideliza_points_reversed_total", "fideliza_river_jobs", "go_goroutines"} {
		require.True(t, strings.Contains(body, series), "%s is served", series)
	}
}
