package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"entgo.io/ent/dialect"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/fideliza/fideliza/migrations"
	"github.com/fideliza/fideliza/quietlog"
)

// migrationLock is the PostgreSQL advisory lock that serialises processes
// migrating one database at once (several serve and worker processes
// starting together).
const migrationLock = 0x66_69_64_65_6c // "fidel"

// Migration is one versioned schema change.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the migrations of dialect in order.
func Migrations(dialectName string) ([]Migration, error) {
	dir := dialectName
	if dialectName == dialect.SQLite {
		dir = "sqlite"
	}
	files, err := fs.Glob(migrations.FS, dir+"/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	out := make([]Migration, 0, len(files))
	for _, f := range files {
		base := strings.TrimSuffix(path.Base(f), ".sql")
		num, name, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number", f)
		}
		body, err := fs.ReadFile(migrations.FS, f)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(body)})
	}
	return out, nil
}

// RiverDriver returns the River driver of the database: both take the
// database/sql pool, so River jobs are inserted in ent's *sql.Tx.
func (db *DB) RiverDriver() riverdriver.Driver[*sql.Tx] {
	if db.Dialect == dialect.SQLite {
		return riversqlite.New(db.SQL)
	}
	return riverdatabasesql.New(db.SQL)
}

// Migrated is what a Migrate did: the schema migrations it applied (none
// when the database was up to date) and the schema's version after them.
type Migrated struct {
	Applied int `json:"applied"`
	Version int `json:"version"`
}

// Migrate brings the schema and River's tables up to date. Concurrent callers
// (several processes starting at once) are serialised: on PostgreSQL by an
// advisory lock, on SQLite by the immediate transaction holding the one
// write lock. River's PostgreSQL migrations add enum values and so cannot share
// one transaction; they run after the schema's, still under the lock.
func (db *DB) Migrate(ctx context.Context, log *slog.Logger) (Migrated, error) {
	var done Migrated
	migrator, err := rivermigrate.New(db.RiverDriver(), &rivermigrate.Config{Logger: quietlog.For(log)})
	if err != nil {
		return done, err
	}
	if db.Dialect == dialect.SQLite {
		if done, err = db.migrateSQLite(ctx, log, migrator); err != nil {
			return done, err
		}
		return done, db.checkDataKey(ctx, db.SQL)
	}

	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return done, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return done, fmt.Errorf("migration lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return done, err
	}
	defer tx.Rollback()
	if done, err = db.migrateSchema(ctx, tx, log); err != nil {
		return done, err
	}
	if err := db.restoreUnlogged(ctx, tx, log); err != nil {
		return done, err
	}
	if err := tx.Commit(); err != nil {
		return done, err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return done, fmt.Errorf("river migrations: %w", err)
	}
	return done, db.checkDataKey(ctx, db.SQL)
}

// migrateSQLite runs the migrations with foreign keys off, as SQLite's
// table rebuilds (CREATE new, copy, DROP old, RENAME) require: with them on,
// dropping the old table would cascade-delete the rows that reference it.
// The pragma only takes effect outside a transaction, so it is set on the
// connection around it, and the keys are checked before commit.
func (db *DB) migrateSQLite(ctx context.Context, log *slog.Logger, migrator *rivermigrate.Migrator[*sql.Tx]) (Migrated, error) {
	var done Migrated
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return done, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return done, err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return done, err
	}
	defer tx.Rollback()
	if done, err = db.migrateSchema(ctx, tx, log); err != nil {
		return done, err
	}
	// One transaction with the schema, so a failed start leaves neither;
	// River's migrations up to v0.31.0 all batch.
	if _, err := migrator.MigrateTx(ctx, tx, rivermigrate.DirectionUp, nil); err != nil { //nolint:staticcheck // see above
		return done, fmt.Errorf("river migrations: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return done, err
	}
	broken := rows.Next()
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return done, err
	}
	if broken {
		return done, errors.New("migration left rows whose foreign keys point nowhere")
	}
	return done, tx.Commit()
}

// migrateSchema applies the pending migrations of migrations/ in tx.
func (db *DB) migrateSchema(ctx context.Context, tx *sql.Tx, log *slog.Logger) (Migrated, error) {
	var done Migrated
	all, err := Migrations(db.Dialect)
	if err != nil {
		return done, err
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS fideliza_migrations (
		version integer PRIMARY KEY,
		name text NOT NULL,
		applied_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP)`); err != nil {
		return done, fmt.Errorf("migrations table: %w", err)
	}
	if done.Version, err = appliedVersion(ctx, tx); err != nil {
		return done, err
	}
	for _, m := range all {
		if m.Version <= done.Version {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return done, fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, db.rebind(`INSERT INTO fideliza_migrations (version, name) VALUES (?, ?)`), m.Version, m.Name); err != nil {
			return done, err
		}
		log.Info("schema migration applied", "version", m.Version, "name", m.Name)
		if err := db.sealClear(ctx, tx, m.Version, log); err != nil {
			return done, fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
		}
		done.Applied, done.Version = done.Applied+1, m.Version
	}
	return done, nil
}

// unloggedTables are PostgreSQL's UNLOGGED tables, each with the migration
// that makes it (written to run again harmlessly). A restore may leave one
// out, and the shared rate limit lets requests through without its table.
var unloggedTables = map[string]string{"rate_windows": "rate_windows"}

// restoreUnlogged makes again, in tx, the UNLOGGED tables that are missing,
// by running their migration again, and says so in the log.
func (db *DB) restoreUnlogged(ctx context.Context, tx *sql.Tx, log *slog.Logger) error {
	all, err := Migrations(db.Dialect)
	if err != nil {
		return err
	}
	for table, migration := range unloggedTables {
		var missing bool
		if err := tx.QueryRowContext(ctx, `SELECT to_regclass($1) IS NULL`, table).Scan(&missing); err != nil {
			return fmt.Errorf("looking for table %s: %w", table, err)
		}
		if !missing {
			continue
		}
		i := slices.IndexFunc(all, func(m Migration) bool { return m.Name == migration })
		if i < 0 {
			return fmt.Errorf("table %s is missing and no migration %s makes it", table, migration)
		}
		if _, err := tx.ExecContext(ctx, all[i].SQL); err != nil {
			return fmt.Errorf("making table %s again: %w", table, err)
		}
		log.Warn("an UNLOGGED table was missing (a restore may leave them out): made again, empty", "table", table)
	}
	return nil
}

func appliedVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT max(version) FROM fideliza_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading schema version: %w", err)
	}
	return int(v.Int64), nil
}

// Rebind turns a query's ? placeholders into the database's (PostgreSQL's
// $n), for the queries written in SQL outside this package.
func (db *DB) Rebind(query string) string { return db.rebind(query) }

// rebind turns ? placeholders into PostgreSQL's $n.
func (db *DB) rebind(query string) string {
	if db.Dialect != dialect.Postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Ready reports whether the database answers and its schema is current,
// for /readyz.
func (db *DB) Ready(ctx context.Context) error {
	all, err := Migrations(db.Dialect)
	if err != nil {
		return err
	}
	current, err := appliedVersion(ctx, db.Reads)
	if err != nil {
		return err
	}
	if want := all[len(all)-1].Version; current != want {
		return fmt.Errorf("schema at version %d, want %d", current, want)
	}
	migrator, err := rivermigrate.New(db.RiverDriver(), nil)
	if err != nil {
		return err
	}
	res, err := migrator.Validate(ctx)
	if err != nil {
		return err
	}
	if !res.OK {
		return fmt.Errorf("river schema: %s", strings.Join(res.Messages, "; "))
	}
	return nil
}
