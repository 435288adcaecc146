package storage

import (
	"context"
	"log/slog"
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
		if _, err := db.SQL.ExecContext(ctx, `PRAGMA optimize=0x10002`); err != nil && ctx.Err() == nil {
			log.Warn("sqlite optimize failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(optimizeInterval):
		}
	}
}
