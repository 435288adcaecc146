package main

import (
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage/storagetest"
)

// idleWatch is how long an idle serve is watched for log lines: longer
// than River's 30-second maintenance cycles, and the points jobs, run every
// 5 seconds here, are worked several times meanwhile.
const idleWatch = 40 * time.Second

// TestIdleServeIsQuiet: once started, a serve that nobody calls writes no
// log line (River's producer reports its counts at DEBUG, successful
// requests too); the start itself is logged, its configuration in one
// line. Its periodic jobs, worked while nobody calls, log nothing either.
func TestIdleServeIsQuiet(t *testing.T) {
	if testing.Short() {
		t.Skip("watches an idle serve for 40 seconds; skipped with -short")
	}
	t.Parallel()
	logs := &syncBuffer{}
	startServe(t, logs, storagetest.URL(t, dialect.SQLite, true), "--points-interval", "5s")
	started := logs.String()
	require.Contains(t, started, `"msg":"listening"`)
	require.Equal(t, 1, strings.Count(started, `"msg":"starting"`), "one line says how it starts: %s", started)
	require.Contains(t, started, `"command":"serve"`)
	require.Contains(t, started, `"version":"`, "the start line names the binary's version")
	time.Sleep(idleWatch) // the idle time watched is what is tested
	after := strings.TrimPrefix(logs.String(), started)
	require.Empty(t, after, "an idle serve logged within %v", idleWatch)
}
