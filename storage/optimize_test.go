package storage_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage/storagetest"
)

// riverFetch is River's fetch of the next jobs on SQLite (riversqlite's
// JobGetAvailable), with literals for its parameters.
const riverFetch = `UPDATE river_job SET attempt = river_job.attempt + 1, attempted_at = datetime('now', 'subsec'), state = 'running'
WHERE id IN (SELECT id FROM river_job WHERE priority >= 0 AND river_job.queue = 'default'
  AND scheduled_at <= datetime('now', 'subsec') AND state = 'available'
  ORDER BY priority ASC, scheduled_at ASC, id ASC LIMIT 10) RETURNING *`

// TestAnalyzeKeepsNoSamples: after an analysis SQLite has its averages
// (sqlite_stat1) but no STAT4 samples, with which it prepares again at
// every run each statement whose parameter meets an index.
func TestAnalyzeKeepsNoSamples(t *testing.T) {
	db := storagetest.Open(t, "sqlite3")
	ctx := context.Background()
	_, err := db.SQL.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
		INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, created_at, priority, metadata, tags)
		SELECT '{}', 'kind_' || (i % 7), 25, 'default', 'available', datetime('now', 'subsec'), datetime('now', 'subsec'), 1, '{}', '[]' FROM n`)
	require.NoError(t, err)
	for _, statement := range []string{"ANALYZE", "PRAGMA optimize=0x10002"} {
		require.NoError(t, db.Analyze(ctx, statement), statement)
		var averages, samples int
		require.NoError(t, db.SQL.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM sqlite_stat1), (SELECT count(*) FROM sqlite_stat4)`).
			Scan(&averages, &samples))
		require.Positive(t, averages, statement)
		require.Zero(t, samples, statement)
	}
}

// TestRiverFetchUsesItsIndexAtAnySize: statistics gathered while the job
// table held four jobs do not make SQLite fetch from twenty thousand by
// scanning them all (it did: "SCAN river_job" for every fetch).
func TestRiverFetchUsesItsIndexAtAnySize(t *testing.T) {
	db := storagetest.Open(t, "sqlite3")
	ctx := context.Background()
	insertJobs := func(n int, state string) {
		_, err := db.SQL.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, created_at, priority, metadata, tags)
			SELECT '{}', 'process_sale', 25, 'default', ?, datetime('now', 'subsec'), datetime('now', 'subsec'), 1, '{}', '[]' FROM n`, n, state)
		require.NoError(t, err)
	}
	insertJobs(4, "available")
	for _, statement := range []string{"ANALYZE", "PRAGMA optimize=0x10002"} {
		require.NoError(t, db.Analyze(ctx, statement))
	}
	insertJobs(20_000, "available")
	rows, err := db.SQL.QueryContext(ctx, "EXPLAIN QUERY PLAN "+riverFetch)
	require.NoError(t, err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	require.NoError(t, rows.Err())
	t.Log(strings.Join(plan, "; "))
	for _, step := range plan {
		require.NotContains(t, step, "SCAN river_job", "the fetch reads every job")
	}
}
