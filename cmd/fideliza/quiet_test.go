package main

import (
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage/storagetest"
)

// idleWatch is how long an idle serve is watched for log lines.
const idleWatch = 60 * time.Second

// TestIdleServeIsQuiet: once started, a serve that nobody calls writes no
// log line (River's producer reports its counts at DEBUG, successful
// requests too); the start itself is logged, its configuration in one
// line.
func TestIdleServeIsQuiet(t *testing.T) {
	if testing.Short() {
		t.Skip("watches an idle serve for a minute; skipped with -short")
	}
	t.Parallel()
	logs := &syncBuffer{}
	startServe(t, logs, storagetest.URL(t, dialect.SQLite, true))
	started := logs.String()
	require.Contains(t, started, `"msg":"listening"`)
	require.Equal(t, 1, strings.Count(started, `"msg":"starting"`), "one line says how it starts: %s", started)
	require.Contains(t, started, `"command":"serve"`)
	require.Contains(t, started, `"version":"`, "the start line names the binary's version")
	time.Sleep(idleWatch) // the idle time watched is what is tested
	after := strings.TrimPrefix(logs.String(), started)
	require.Empty(t, after, "an idle serve logged within %v", idleWatch)
}
