package graph

import (
	"database/sql"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/storage"
)

// App holds the dependencies of the operations GraphQL, REST, the CLI and
// the workers share.
type App struct {
	DB    *storage.DB
	River *river.Client[*sql.Tx] // nil in commands that enqueue nothing
	Auth  *auth.Service
	Log   *slog.Logger
	Clock func() time.Time // nil: the system clock; tests set it
}

// nowUTC is the time operations stamp records with: UTC, to the microsecond
// both databases keep.
func nowUTC() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
