package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fideliza/fideliza/ent"
)

// Tx is one database transaction seen two ways: an ent client for the data
// model and the *sql.Tx River's InsertTx enqueues jobs in. A job inserted
// through SQL commits or rolls back with the rows written through Ent.
type Tx struct {
	Ent *ent.Client
	SQL *sql.Tx
	// committed holds what OnCommit was given, run once the transaction has
	// committed.
	committed *[]func()
}

// OnCommit runs fn once the transaction has committed (not when it rolls
// back, nor for a run InTx does again after a conflict), before InTx
// returns: what this process keeps in memory of the rows the transaction
// wrote is dropped there, so the caller's next read sees them.
func (tx Tx) OnCommit(fn func()) { *tx.committed = append(*tx.committed, fn) }

// ErrConflict is what a transaction's fn returns when a concurrent commit
// changed a row it read before locking it: InTx runs it again.
var ErrConflict = errors.New("a concurrent write changed what the transaction read")

// txAttempts bounds how many times InTx runs a transaction that meets a
// conflict; txBackoff is the first wait between runs, doubled at each.
const (
	txAttempts = 8
	txBackoff  = 5 * time.Millisecond
)

// InTx runs fn in a transaction, committing when it returns nil. A
// transaction that fails on a conflict (ErrConflict, or PostgreSQL's
// deadlock or serialization failure, which roll it back whole) is run again,
// up to txAttempts times after a random wait that doubles at each run, so a
// conflict never reaches the caller unless it lasts. fn may thus run more
// than once: what it sets outside the transaction, it sets afresh on each run.
func (db *DB) InTx(ctx context.Context, fn func(tx Tx) error) error {
	wait := txBackoff
	for attempt := 1; ; attempt++ {
		err := db.inTx(ctx, fn)
		if attempt == txAttempts || !conflict(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait/2 + rand.N(wait)): // jitter: the transactions that met do not meet again
		}
		wait *= 2
	}
}

// conflict says err is a transaction's conflict with a concurrent one:
// ErrConflict, a deadlock (40P01) or a serialization failure (40001).
func conflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.Is(err, ErrConflict) || errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

func (db *DB) inTx(ctx context.Context, fn func(tx Tx) error) (err error) {
	sqlTx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	drv := boundDriver{tx: entsql.NewDriver(db.Dialect, entsql.Conn{ExecQuerier: sqlTx}), after: db.driver, ended: new(atomic.Bool), db: db}
	defer func() {
		drv.ended.Store(true)
		if p := recover(); p != nil {
			_ = sqlTx.Rollback()
			panic(p)
		}
	}()
	var committed []func()
	if err := fn(Tx{Ent: ent.NewClient(ent.Driver(drv)), SQL: sqlTx, committed: &committed}); err != nil {
		return errors.Join(err, sqlTx.Rollback())
	}
	if err := sqlTx.Commit(); err != nil {
		return err
	}
	for _, f := range committed {
		f()
	}
	db.committed()
	return nil
}

// Exclusive runs fn in a transaction that no other Exclusive transaction of
// the same lock runs beside, in any process: on PostgreSQL it holds a
// transaction-scoped advisory lock; on SQLite every transaction holds the
// one write lock from its start. What fn checks it may then create once.
func (db *DB) Exclusive(ctx context.Context, lock string, fn func(tx Tx) error) error {
	return db.InTx(ctx, func(tx Tx) error {
		if db.Dialect == dialect.Postgres {
			if _, err := tx.SQL.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, lock); err != nil {
				return fmt.Errorf("lock %q: %w", lock, err)
			}
		}
		return fn(tx)
	})
}

// boundDriver runs every statement in one open transaction; the transactions
// ent opens inside it (client.Tx, multi-statement writes) are no-ops. Once
// the transaction has ended, entities read through it (an operation's
// result, whose edges GraphQL loads afterwards) query through the database's
// own driver instead of a finished transaction.
type boundDriver struct {
	tx    *entsql.Driver
	after dialect.Driver
	ended *atomic.Bool
	db    *DB // its Trace
}

func (d boundDriver) current() dialect.Driver {
	if d.ended.Load() {
		return d.after
	}
	return d.tx
}

func (d boundDriver) Exec(ctx context.Context, query string, args, v any) error {
	d.db.trace(query)
	return d.current().Exec(ctx, query, args, v)
}

func (d boundDriver) Query(ctx context.Context, query string, args, v any) error {
	d.db.trace(query)
	return d.current().Query(ctx, query, args, v)
}

// ExecContext and QueryContext serve ent's execquery feature.
func (d boundDriver) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	d.db.trace(query)
	return d.current().(interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}).ExecContext(ctx, query, args...)
}

func (d boundDriver) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	d.db.trace(query)
	return d.current().(interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}).QueryContext(ctx, query, args...)
}

func (d boundDriver) Dialect() string { return d.tx.Dialect() }

// Close closes nothing: the transaction ends in InTx, the pool with the DB.
func (d boundDriver) Close() error { return nil }

func (d boundDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	if d.ended.Load() {
		return d.after.Tx(ctx)
	}
	return dialect.NopTx(d), nil
}

func (d boundDriver) BeginTx(ctx context.Context, opts *sql.TxOptions) (dialect.Tx, error) {
	if d.ended.Load() {
		return d.after.(interface {
			BeginTx(context.Context, *sql.TxOptions) (dialect.Tx, error)
		}).BeginTx(ctx, opts)
	}
	return dialect.NopTx(d), nil
}

// WithCustomPlans runs fn's reads each planned for its own arguments.
// PostgreSQL settles on one generic plan for a prepared statement after five
// runs. For a search that plan cannot know how selective the term is: with
// a customer name term it walks the tenant's customers newest first and
// tests each (143 ms at 1,000,000 customers) where the plan for the term
// reads the trigram index (2 ms). So on PostgreSQL fn runs in a read
// transaction with plan_cache_mode = force_custom_plan. SQLite plans no
// statement generically: there fn runs on the database's client.
func (db *DB) WithCustomPlans(ctx context.Context, fn func(*ent.Client) error) error {
	if db.Dialect != dialect.Postgres {
		return fn(db.Ent)
	}
	return db.InTx(ctx, func(tx Tx) error {
		if _, err := tx.SQL.ExecContext(ctx, "SET LOCAL plan_cache_mode = force_custom_plan"); err != nil {
			return err
		}
		return fn(tx.Ent)
	})
}
