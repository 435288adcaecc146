package rest

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/graph"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// BenchmarkIdleSubscriptions opens 1,000 connections each holding a
// salesProcessed subscription and reports the heap and stacks they take,
// server and clients together (one process): an upper bound of the
// server's share (docs/performance.md).
func BenchmarkIdleSubscriptions(b *testing.B) {
	const n = 1000
	e := newTestEnv(b, storagetest.Open(b, "sqlite3"), func(s *ServerSetup) {
		s.Subscriptions = graph.SubscriptionLimits{ConnectionsPerClient: n, IdleTimeout: time.Hour}
	})
	tok, err := e.app.Auth.IssueUserToken(b.Context(), e.tenantID, viewer.RoleAnalyst, "bench", time.Hour)
	require.NoError(b, err)
	inUse := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse + m.StackInuse
	}
	for range b.N {
		before := inUse()
		clients := make([]*wsClient, n)
		for i := range clients {
			clients[i] = wsDial(b, e.srv.URL, tok).ready()
			clients[i].subscribe(fmt.Sprint(i), "salesProcessed")
		}
		time.Sleep(time.Second) // the last subscriptions begin
		b.ReportMetric(float64(inUse()-before)/(1<<20), "MB/1000subs")
		b.ReportMetric(float64(runtime.NumGoroutine()), "goroutines")
		for _, c := range clients {
			_ = c.conn.CloseNow()
		}
	}
}
