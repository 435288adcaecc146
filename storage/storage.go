// Package storage opens the database named by a URL (an embedded SQLite file by
// default, or PostgreSQL), applies the schema and River migrations, and
// answers readiness checks.
package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/fideliza/fideliza/ent"
	_ "github.com/fideliza/fideliza/ent/runtime" // privacy policies, hooks and defaults
	"github.com/fideliza/fideliza/ent/schema/sealed"
	"github.com/fideliza/fideliza/tracing"
)

// DefaultURL is the embedded database used when no URL is configured.
const DefaultURL = "sqlite://fideliza.db"

// DB is an open database: the pool River and the write path use, the ent
// client on top of it, and the dialect.
type DB struct {
	// SQL is the pool of writes and transactions (and River's pool). On SQLite
	// it holds a single connection: SQLite has one writer at a time, and
	// queueing in the pool beats failing with SQLITE_BUSY.
	SQL *sql.DB
	// Reads is the pool of reads outside transactions. On SQLite it is a
	// separate pool of read-only connections (WAL lets them run beside the
	// writer), one of which watches for other processes' changes while
	// someone subscribes to them; on PostgreSQL it is SQL.
	Reads   *sql.DB
	Ent     *ent.Client
	Dialect string
	driver  dialect.Driver // Ent's driver
	pgx     *pgxpool.Pool  // the connections behind SQL on PostgreSQL
	notify  notifier       // Listen's waiters
	tracer  atomic.Pointer[func(query string)]
}

// Trace has fn see every statement ent runs on db, in transactions or not,
// until stop is called: tests count what an operation reads with it.
func (db *DB) Trace(fn func(query string)) (stop func()) {
	db.tracer.Store(&fn)
	return func() { db.tracer.Store(nil) }
}

func (db *DB) trace(query string) {
	if fn := db.tracer.Load(); fn != nil {
		(*fn)(query)
	}
}

// tracedDriver is the driver of DB.Ent: db's, seen by Trace.
type tracedDriver struct {
	dialect.Driver
	db *DB
}

func (d tracedDriver) Exec(ctx context.Context, query string, args, v any) error {
	d.db.trace(query)
	return d.Driver.Exec(ctx, query, args, v)
}

func (d tracedDriver) Query(ctx context.Context, query string, args, v any) error {
	d.db.trace(query)
	return d.Driver.Query(ctx, query, args, v)
}

// ExecContext and QueryContext serve ent's execquery feature.
func (d tracedDriver) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	d.db.trace(query)
	return d.Driver.(interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}).ExecContext(ctx, query, args...)
}

func (d tracedDriver) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	d.db.trace(query)
	return d.Driver.(interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}).QueryContext(ctx, query, args...)
}

// ParseURL reads a database URL ("" means DefaultURL) and names what is
// wrong with one no database can be opened by: no scheme, a scheme other
// than sqlite:// and postgres://, or sqlite:// without a file name.
func ParseURL(rawURL string) (*url.URL, error) {
	if rawURL == "" {
		rawURL = DefaultURL
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	switch u.Scheme {
	case "sqlite":
		if sqlitePath(u) == "" {
			return nil, errors.New("database url: sqlite:// needs a file name, as in sqlite://fideliza.db")
		}
	case "postgres", "postgresql":
	case "":
		return nil, fmt.Errorf("database url %q has no scheme: for an SQLite file write sqlite://%s, for PostgreSQL postgres://user@host:5432/name",
			redact(u), strings.TrimPrefix(u.Path, "//"))
	default:
		return nil, fmt.Errorf("database url %q: the scheme %s:// is not supported; use sqlite:// (as in sqlite://fideliza.db) or postgres:// (as in postgres://user@host:5432/name)",
			redact(u), u.Scheme)
	}
	return u, nil
}

// Open opens the database named by rawURL ("" means DefaultURL).
func Open(ctx context.Context, rawURL string) (*DB, error) {
	if !sealed.Installed() {
		return nil, sealed.ErrNoKey
	}
	u, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	var (
		db    *DB
		where string // the database, as the error of an unreachable one names it
	)
	if u.Scheme == "sqlite" {
		if err := sqliteDirExists(u); err != nil {
			return nil, err
		}
		where = "the SQLite file " + sqlitePath(u)
		db, err = openSQLite(sqlitePath(u))
	} else {
		db, where, err = openPostgres(ctx, rawURL)
	}
	if err != nil {
		return nil, err
	}
	db.Ent = newClient(tracedDriver{Driver: db.driver, db: db})
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := ping(pingCtx, db.SQL); err != nil {
		db.Close()
		if name, ok := absentDatabase(err); ok {
			return nil, fmt.Errorf("database %q does not exist on %s: create it first (createdb %s, or CREATE DATABASE %s): %w",
				name, strings.TrimSuffix(where, fmt.Sprintf(" (database %q)", name)), name, name, err)
		}
		return nil, fmt.Errorf("database unreachable: %s: %w", where, err)
	}
	return db, nil
}

// absentDatabase reports the database a PostgreSQL server refused a
// connection to because it does not exist (SQLSTATE 3D000,
// invalid_catalog_name): the server answers, the database is to be created.
func absentDatabase(err error) (string, bool) {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "3D000" {
		return "", false
	}
	var connect *pgconn.ConnectError
	if errors.As(err, &connect) && connect.Config != nil {
		return connect.Config.Database, true
	}
	return "", false
}

// sqliteDirExists names the directory of an SQLite database file when it
// does not exist: SQLite creates the file, not its directory, and the data
// key file made beside it would fail first with a less helpful name.
func sqliteDirExists(u *url.URL) error {
	dir := filepath.Dir(sqlitePath(u))
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("database url %q: the directory %s of the SQLite file does not exist: create it first (mkdir -p %s)",
			redact(u), dir, dir)
	case err != nil:
		return fmt.Errorf("database url %q: %w", redact(u), err)
	case !info.IsDir():
		return fmt.Errorf("database url %q: %s is not a directory", redact(u), dir)
	}
	return nil
}

// ping checks the database answers. A new SQLite file turns to WAL on the
// first connection, and that pragma fails at once (SQLITE_BUSY, without
// waiting for the busy timeout) while another process is migrating the same
// file: such a ping is retried until ctx ends.
func ping(ctx context.Context, db *sql.DB) error {
	for {
		err := db.PingContext(ctx)
		if err == nil || !strings.Contains(err.Error(), "SQLITE_BUSY") {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// sqlitePath reads sqlite:///abs/file.db (absolute) and sqlite://file.db
// (relative to the working directory).
func sqlitePath(u *url.URL) string {
	return filepath.FromSlash(u.Host + u.Path)
}

func redact(u *url.URL) string {
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

func openSQLite(path string) (*DB, error) {
	pragmas := "_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)&_time_format=sqlite"
	// Transactions take the write lock when they begin: a deferred transaction
	// that reads and then writes can fail with SQLITE_BUSY instead of waiting.
	writes, err := openCachedSQLite("file:" + path + "?" + pragmas + "&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	writes.SetMaxOpenConns(1)
	writes.SetConnMaxIdleTime(0)
	reads, err := openCachedSQLite("file:" + path + "?" + pragmas + "&_pragma=query_only(1)")
	if err != nil {
		writes.Close()
		return nil, err
	}
	// Every read connection stays open: database/sql keeps two idle by
	// default and would reopen the others, each time running the pragmas
	// and losing its statement cache (a third of identify's CPU). Eight
	// serve reads, and one more watches for changes (Subscribe).
	reads.SetMaxOpenConns(9)
	reads.SetMaxIdleConns(9)
	reads.SetConnMaxIdleTime(0)
	drv := splitDriver{
		Driver: entsql.OpenDB(dialect.SQLite, writes),
		reads:  entsql.OpenDB(dialect.SQLite, reads),
	}
	return &DB{SQL: writes, Reads: reads, Dialect: dialect.SQLite, driver: drv}, nil
}

// postgresMaxConns is the default size of the PostgreSQL pool
// (pool_max_conns in the URL overrides it).
const postgresMaxConns = 32

// openPostgres opens a pgxpool behind database/sql, and pgxpool alone
// bounds and keeps the connections. Under a saturated database/sql pool, a
// waiting request is handed the connection another just released, and a
// connection a cancelled query (a client that hung up) left dead fails it
// with "driver: bad connection" once three such come in a row. pgxpool
// checks a connection's health when it hands it out and replaces a dead one,
// and database/sql, unbounded and keeping nothing idle, asks it every time.
// It also returns the server's address, host:port, with the database's name.
func openPostgres(ctx context.Context, rawURL string) (*DB, string, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, "", fmt.Errorf("database url: %w", err)
	}
	where := fmt.Sprintf("PostgreSQL at %s (database %q)",
		net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))), cfg.ConnConfig.Database)
	if !strings.Contains(rawURL, "pool_max_conns") {
		cfg.MaxConns = postgresMaxConns
	}
	cfg.MaxConnIdleTime = 5 * time.Minute
	pgx, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, "", err
	}
	pool := tracing.OpenDB(stdlib.GetPoolConnector(pgx))
	pool.SetMaxIdleConns(0) // no idle connections in database/sql (stdlib.OpenDBFromPool's)
	drv := entsql.OpenDB(dialect.Postgres, pool)
	return &DB{SQL: pool, Reads: pool, Dialect: dialect.Postgres, driver: drv, pgx: pgx}, where, nil
}

// Pgx is the pgx pool behind SQL on PostgreSQL, nil on SQLite: River's pgx
// driver LISTENs on it, so a worker hears of a job as its transaction commits.
func (db *DB) Pgx() *pgxpool.Pool { return db.pgx }

// Close closes the pools.
func (db *DB) Close() error {
	db.notify.close()
	err := db.SQL.Close()
	if db.Reads != db.SQL {
		err = errors.Join(err, db.Reads.Close())
	}
	if db.pgx != nil {
		db.pgx.Close()
	}
	return err
}

// splitDriver sends SELECTs outside transactions to the read pool and
// everything else (writes, INSERT … RETURNING, transactions) to the write pool.
type splitDriver struct {
	*entsql.Driver
	reads *entsql.Driver
}

func (d splitDriver) Query(ctx context.Context, query string, args, v any) error {
	if isSelect(query) {
		return d.reads.Query(ctx, query, args, v)
	}
	return d.Driver.Query(ctx, query, args, v)
}

func isSelect(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	return len(q) >= 6 && strings.EqualFold(q[:6], "SELECT")
}
