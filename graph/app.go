package graph

import (
	"database/sql"

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
}
