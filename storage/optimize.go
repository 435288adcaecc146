package storage

import (
	"context"
	"log/slog"
	"time"

	"entgo.io/ent/dialect"
)

// OptimizeInterval is how often KeepOptimized refreshes SQLite's planner
// statistics, as SQLite recommends for long-lived connections.
const OptimizeInterval = time.Hour

// Optimize refreshes SQLite's planner statistics where they are missing or
// stale (PRAGMA optimize). Without them SQLite takes an equality on
// tenant_id for a selective one and, for example, walks a tenant's whole
// customer index instead of the few rows a search index found. PostgreSQL
// keeps its statistics itself (autovacuum): nothing to do there.
func (db *DB) Optimize(ctx context.Context) error {
	if db.Dialect != dialect.SQLite {
		return nil
	}
	_, err := db.SQL.ExecContext(ctx, `PRAGMA optimize=0x10002`)
	return err
}

// KeepOptimized runs Optimize now and then every OptimizeInterval until ctx
// ends, logging failures.
func (db *DB) KeepOptimized(ctx context.Context, log *slog.Logger) {
	if db.Dialect != dialect.SQLite {
		return
	}
	for {
		if err := db.Optimize(ctx); err != nil && ctx.Err() == nil {
			log.Warn("sqlite optimize failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(OptimizeInterval):
		}
	}
}
