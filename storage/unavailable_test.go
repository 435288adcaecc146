package storage_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/httperr"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestUnavailable: the failures of a database that cannot serve now are
// told from those of the request or our code, with real errors of both
// drivers where the test can cause them.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	closed, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "closed.db"))
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	_, closedErr := closed.ExecContext(ctx, "SELECT 1")

	readOnlyPath := filepath.Join(t.TempDir(), "ro.db")
	rw, err := sql.Open("sqlite", readOnlyPath)
	require.NoError(t, err)
	_, err = rw.ExecContext(ctx, "CREATE TABLE t (id integer PRIMARY KEY)")
	require.NoError(t, err)
	require.NoError(t, rw.Close())
	ro, err := sql.Open("sqlite", "file:"+readOnlyPath+"?mode=ro")
	require.NoError(t, err)
	t.Cleanup(func() { ro.Close() })
	_, readOnlyErr := ro.ExecContext(ctx, "INSERT INTO t (id) VALUES (1)")
	require.Error(t, readOnlyErr)
	_, syntaxErr := ro.ExecContext(ctx, "SELEC 1")
	require.Error(t, syntaxErr)

	// Nothing listens on a port of a listener just closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	dialCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, openErr := storage.Open(dialCtx, "postgres://nobody@"+addr+"/none?sslmode=disable&connect_timeout=2")
	require.Error(t, openErr)

	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"a closed pool", closedErr, true},
		{"a closed pool, wrapped", fmt.Errorf("ent: querying: %w", closedErr), true},
		{"a closed pool, joined", errors.Join(closedErr, errors.New("rollback failed")), true},
		{"a read-only SQLite file", readOnlyErr, true},
		{"PostgreSQL refusing connections", openErr, true},
		{"a bad connection", fmt.Errorf("exec: %w", driver.ErrBadConn), true},
		{"a connection done", sql.ErrConnDone, true},
		{"PostgreSQL shutting down", &pgconn.PgError{Code: "57P01"}, true},
		{"PostgreSQL out of connections", &pgconn.PgError{Code: "53300"}, true},
		{"PostgreSQL connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"a statement timeout", &pgconn.PgError{Code: "57014"}, true},

		{"nil", nil, false},
		{"the caller gone", context.Canceled, false},
		{"the caller's deadline (overloaded)", fmt.Errorf("ent: querying: %w", context.DeadlineExceeded), false},
		{"a unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"an invalid numeric", &pgconn.PgError{Code: "22003"}, false},
		{"an SQL syntax error", syntaxErr, false},
		{"no rows", sql.ErrNoRows, false},
		{"our own error", errors.New("database on fire"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, storage.Unavailable(c.err), "%v", c.err)
		})
	}
}

// TestPoolWaitIsOverloaded: a request whose deadline passes while every
// connection of the pool serves other requests is told apart from a
// database that fails: overloaded, answered 503 overloaded, not
// service_unavailable. The wait is real, on each dialect.
func TestPoolWaitIsOverloaded(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		size := db.Reads.Stats().MaxOpenConnections
		if p := db.Pgx(); p != nil {
			size = int(p.Stat().MaxConns())
		}
		for range size {
			conn, err := db.Reads.Conn(ctx)
			require.NoError(t, err)
			t.Cleanup(func() { conn.Close() })
		}
		wait, cancel := context.WithTimeout(viewer.SystemContext(ctx), 50*time.Millisecond)
		defer cancel()
		_, err := db.Ent.Tenant.Query().Count(wait)
		require.Error(t, err)
		require.True(t, storage.Overloaded(err), "%v", err)
		require.False(t, storage.Unavailable(err), "%v", err)
		e, ok := httperr.As(err)
		require.True(t, ok)
		require.Equal(t, "overloaded", e.Code)
		require.Equal(t, http.StatusServiceUnavailable, httperr.Status(e.Kind))
	})
}
