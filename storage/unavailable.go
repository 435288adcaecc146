package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// Unavailable says err is the database failing to serve, not the request
// or our code: a connection refused, lost or closed, a server shutting down
// or out of connections, a query cancelled by the server, an SQLite file
// busy past its timeout, unreadable or full. Clients retry such a failure
// later; the interfaces answer it 503. A request out of time (Overloaded)
// is not one.
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || Overloaded(err) {
		return false // the caller went away or ran out of time: not the database
	}
	var (
		netErr     net.Error
		connectErr *pgconn.ConnectError
		pgErr      *pgconn.PgError
		liteErr    *sqlite.Error
	)
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.As(err, &netErr), errors.As(err, &connectErr), pgconn.SafeToRetry(err), errors.Is(err, errPoolClosed):
		return true
	case errors.As(err, &pgErr):
		return unavailablePGCode(pgErr.Code)
	case errors.As(err, &liteErr):
		return unavailableSQLiteCode(liteErr.Code())
	}
	return false
}

// Overloaded says err is the request's own deadline passing while it
// waited on the database: for a connection of a pool all in use by other
// requests (the usual case: a burst of reads), or for a statement to
// finish. The database answers, only not in time for this request: the
// interfaces answer 503 with a code of its own (overloaded), not as the
// database being unreachable. A deadline that passed while connecting to
// the server is the server unreachable (Unavailable).
func Overloaded(err error) bool {
	var connectErr *pgconn.ConnectError
	return errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &connectErr)
}

// unavailablePGCode: class 08 (connection exception), 53 (insufficient
// resources: too many connections, disk full, out of memory), 57P01–57P05
// (the server shutting down, crashing or refusing connections) and 57014
// (a statement timeout).
func unavailablePGCode(code string) bool {
	switch {
	case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "53"), strings.HasPrefix(code, "57P"), code == "57014":
		return true
	}
	return false
}

// The primary SQLite result codes of a database that cannot serve now
// (https://www.sqlite.org/rescode.html); extended codes carry them in their
// low byte.
const (
	sqliteBusy     = 5
	sqliteLocked   = 6
	sqliteNoMem    = 7
	sqliteReadOnly = 8
	sqliteIOErr    = 10
	sqliteFull     = 13
	sqliteCantOpen = 14
)

func unavailableSQLiteCode(code int) bool {
	switch code & 0xff {
	case sqliteBusy, sqliteLocked, sqliteNoMem, sqliteReadOnly, sqliteIOErr, sqliteFull, sqliteCantOpen:
		return true
	}
	return false
}

// errPoolClosed is database/sql's error for a pool already closed, as
// during a shutdown: an unexported value, obtained from a pool closed here.
var errPoolClosed = func() error {
	db := sql.OpenDB(noConnector{})
	_ = db.Close()
	return db.PingContext(context.Background())
}()

type noConnector struct{}

func (noConnector) Connect(context.Context) (driver.Conn, error) { return nil, driver.ErrBadConn }
func (noConnector) Driver() driver.Driver                        { return nil }
