package rest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/graph"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// The clients' process of BenchmarkIdleSubscriptions: this test binary
// again, told the server's URL and a token.
const (
	envBenchServer = "FIDELIZA_BENCH_SUBSCRIPTIONS_SERVER"
	envBenchToken  = "FIDELIZA_BENCH_SUBSCRIPTIONS_TOKEN"
	benchReady     = "subscriptions clients ready"
)

// BenchmarkIdleSubscriptions opens 1,000 connections each holding a
// salesProcessed subscription, from another process (this test binary
// again), and reports the heap and stacks the server takes for them, and
// its goroutines (docs/performance.md).
func BenchmarkIdleSubscriptions(b *testing.B) {
	const n = 1000
	if server := os.Getenv(envBenchServer); server != "" {
		idleClients(b, server, os.Getenv(envBenchToken), n)
		return
	}
	e := newTestEnv(b, storagetest.Open(b, "sqlite3"), func(s *ServerSetup) {
		s.Subscriptions = graph.SubscriptionLimits{ConnectionsPerClient: n, IdleTimeout: time.Hour}
	})
	tok, err := e.app.Auth.IssueUserToken(b.Context(), e.tenantID, viewer.RoleAnalyst, "bench", time.Hour)
	require.NoError(b, err)
	inUse := func() (heap, stacks float64) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapInuse) / (1 << 20), float64(m.StackInuse) / (1 << 20)
	}
	for range b.N {
		heap0, stacks0 := inUse()
		goroutines := runtime.NumGoroutine()
		cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^BenchmarkIdleSubscriptions$", "-test.benchtime=1x")
		cmd.Env = append(os.Environ(), envBenchServer+"="+e.srv.URL, envBenchToken+"="+tok)
		stdin, err := cmd.StdinPipe()
		require.NoError(b, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(b, err)
		cmd.Stderr = os.Stderr
		require.NoError(b, cmd.Start())
		lines := bufio.NewScanner(stdout)
		var out []string
		for lines.Scan() && lines.Text() != benchReady {
			out = append(out, lines.Text())
		}
		require.NoError(b, lines.Err())
		require.Equal(b, benchReady, lines.Text(), "the clients' process:\n%s", strings.Join(out, "\n"))
		time.Sleep(time.Second) // the last subscriptions begin
		if f := os.Getenv("FIDELIZA_BENCH_HEAP_PROFILE"); f != "" {
			w, err := os.Create(f)
			require.NoError(b, err)
			require.NoError(b, pprof.WriteHeapProfile(w))
			require.NoError(b, w.Close())
			w, err = os.Create(f + ".goroutines")
			require.NoError(b, err)
			require.NoError(b, pprof.Lookup("goroutine").WriteTo(w, 1))
			require.NoError(b, w.Close())
		}
		heap, stacks := inUse()
		b.ReportMetric(heap-heap0+stacks-stacks0, "MB/1000subs")
		b.ReportMetric(heap-heap0, "heapMB/1000subs")
		b.ReportMetric(stacks-stacks0, "stackMB/1000subs")
		b.ReportMetric(float64(runtime.NumGoroutine()-goroutines)/n, "goroutines/sub")
		require.NoError(b, stdin.Close()) // the clients close their connections and end
		_, _ = io.Copy(io.Discard, stdout)
		require.NoError(b, cmd.Wait())
	}
}

// idleClients opens n connections to server, each subscribing to
// salesProcessed, says so on stdout, and closes them once stdin ends.
func idleClients(b *testing.B, server, token string, n int) {
	clients := make([]*wsClient, n)
	for i := range clients {
		clients[i] = wsDial(b, server, token).ready()
		clients[i].subscribe(fmt.Sprint(i), "salesProcessed")
	}
	fmt.Println(benchReady)
	_, _ = io.Copy(io.Discard, os.Stdin)
	for _, c := range clients {
		_ = c.conn.CloseNow()
	}
}
