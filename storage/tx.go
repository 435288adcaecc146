package storage

import (
	"context"
	"database/sql"
	"errors"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/fideliza/fideliza/ent"
)

// Tx is one database transaction seen two ways: an ent client for the data
// model and the *sql.Tx River's InsertTx enqueues jobs in. A job inserted
// through SQL commits or rolls back with the rows written through Ent.
type Tx struct {
	Ent *ent.Client
	SQL *sql.Tx
}

// InTx runs fn in a transaction, committing when it returns nil.
func (db *DB) InTx(ctx context.Context, fn func(tx Tx) error) (err error) {
	sqlTx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			_ = sqlTx.Rollback()
			panic(p)
		}
	}()
	drv := boundDriver{entsql.NewDriver(db.Dialect, entsql.Conn{ExecQuerier: sqlTx})}
	if err := fn(Tx{Ent: ent.NewClient(ent.Driver(drv)), SQL: sqlTx}); err != nil {
		return errors.Join(err, sqlTx.Rollback())
	}
	return sqlTx.Commit()
}

// boundDriver runs every statement in one open transaction; the transactions
// ent opens inside it (client.Tx, multi-statement writes) are no-ops.
type boundDriver struct{ *entsql.Driver }

func (d boundDriver) Tx(context.Context) (dialect.Tx, error) { return dialect.NopTx(d), nil }

func (d boundDriver) BeginTx(context.Context, *sql.TxOptions) (dialect.Tx, error) {
	return dialect.NopTx(d), nil
}
