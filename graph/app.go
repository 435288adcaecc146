package graph

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/storage"
)

// App holds the dependencies of the operations GraphQL, REST, the CLI and
// the workers share.
type App struct {
	DB    *storage.DB
	River *river.Client[*sql.Tx] // nil in commands that enqueue nothing
	Auth  *auth.Service
	Log   *slog.Logger
}

// ent returns the ent client of ctx's transaction (GraphQL mutations run in
// one, opened by entgql.Transactioner), or the database's client.
func (a *App) ent(ctx context.Context) *ent.Client {
	if c := ent.FromContext(ctx); c != nil {
		return c
	}
	return a.DB.Ent
}

// nowUTC is the time operations stamp records with: UTC, to the microsecond
// both databases keep.
func nowUTC() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
