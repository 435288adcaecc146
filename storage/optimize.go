package storage

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"entgo.io/ent/dialect"
)

// optimizeInterval is how often KeepOptimized refreshes SQLite's planner
// statistics, as SQLite recommends for long-lived connections.
const optimizeInterval = time.Hour

// KeepOptimized refreshes SQLite's planner statistics where they are missing
// or stale (PRAGMA optimize), now and then every optimizeInterval until ctx
// ends, logging failures. Without them SQLite takes an equality on
// tenant_id for a selective one and, for example, walks a tenant's whole
// customer index instead of the few rows a search index found. PostgreSQL
// keeps its statistics itself (autovacuum): nothing to do there.
func (db *DB) KeepOptimized(ctx context.Context, log *slog.Logger) {
	if db.Dialect != dialect.SQLite {
		return
	}
	for {
		if err := db.Analyze(ctx, `PRAGMA optimize=0x10002`); err != nil && ctx.Err() == nil {
			log.Warn("sqlite optimize failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(optimizeInterval):
		}
	}
}

// RefreshStatistics has PostgreSQL's planner learn the tables' sizes now
// (ANALYZE, which also drops the plans cached for them), for a writer that
// fills a fresh database faster than autovacuum looks at it, or where it is
// off: the living demo's year. Planned for the empty tables the migrations
// left, and kept by the connections' prepared statements, its queries took
// the tenant's (tenant_id, created_at) index for the customer's and read
// the tenant's whole year for each sale processed (70 million rows read to
// write 16,000 points entries). SQLite assumes large tables when it has no
// statistics: nothing to do there.
func (db *DB) RefreshStatistics(ctx context.Context) error {
	if db.Dialect != dialect.Postgres {
		return nil
	}
	_, err := db.SQL.ExecContext(ctx, `ANALYZE`)
	return err
}

// Analyze runs statement (ANALYZE, or a PRAGMA optimize) on SQLite and then
// sets the statistics of River's job table to those of a long queue. The
// job table is the one table whose size swings by orders of magnitude
// within hours: analyzed while it held a few jobs, SQLite took it for tiny
// and fetched the next jobs by scanning the whole table (the plan of
// River's UPDATE … WHERE id IN (SELECT … LIMIT n) turns from index probes
// into a scan), so at a peak, with tens of thousands of sales queued, each
// fetch read every job: 17% of the service's CPU, growing with the queue.
// A long queue's statistics make SQLite use its indexes at every size.
func (db *DB) Analyze(ctx context.Context, statement string) error {
	if db.Dialect != dialect.SQLite {
		return nil
	}
	if _, err := db.SQL.ExecContext(ctx, statement); err != nil {
		return err
	}
	return db.InTx(ctx, func(tx Tx) error {
		if _, err := tx.SQL.ExecContext(ctx, `DELETE FROM sqlite_stat1 WHERE tbl = 'river_job'`); err != nil {
			if strings.Contains(err.Error(), "no such table") {
				return nil // nothing analyzed yet: SQLite assumes large tables
			}
			return err
		}
		// The build of SQLite we use keeps STAT4 samples. With them, a
		// statement whose parameter meets an index is prepared again at
		// every run, for the value bound (half of SQLite's time in the
		// authorize load went there): the prepared statements' cache is for
		// nothing. The averages of sqlite_stat1 are what the plans need.
		if _, err := tx.SQL.ExecContext(ctx, `DELETE FROM sqlite_stat4`); err != nil && !strings.Contains(err.Error(), "no such table") {
			return err
		}
		for _, s := range queueStatistics {
			if _, err := tx.SQL.ExecContext(ctx, `INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES ('river_job', ?, ?)`, s.index, s.stat); err != nil {
				return err
			}
		}
		// Makes SQLite read the statistics again.
		_, err := tx.SQL.ExecContext(ctx, `ANALYZE sqlite_schema`)
		return err
	})
}

// queueStatistics describe a job table of a million jobs in a few states,
// queues and priorities (sqlite_stat1's stat: rows, then rows per distinct
// prefix of the index's columns).
var queueStatistics = []struct{ index, stat string }{
	{"river_job_prioritized_fetching_index", "1000000 200000 200000 200000 10 1"},
	{"river_job_state_and_finalized_at_index", "1000000 200000 1"},
	{"river_job_kind", "1000000 100000"},
	{"river_job_unique_idx", "1000000 1"},
}
