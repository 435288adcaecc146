package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"entgo.io/ent/dialect"

	"github.com/fideliza/fideliza/ent/schema/sealed"
)

// sealedColumn is a column the application seals (ent/schema/sealed): text
// (sealed.Text) with the blind index kept beside it, or bytes (sealed.Bytes)
// without one. sealedBy is the migration in whose transaction the values a
// database held in clear before were sealed.
type sealedColumn struct {
	table, column, index string
	what                 string // the values, as logs name them
	sealedBy             int
	// inClearAdvice is logged, as a warning, when the migration found
	// values in clear.
	inClearAdvice string
}

// sealedColumns are the sealed columns a rotation moves to the newest key.
// Import files (customer_import_chunks.data) are sealed too but not moved:
// they are kept at most a day, and no key ever leaves the key file.
var sealedColumns = []sealedColumn{
	{table: "customers", column: "document", index: "document_index", what: "documents", sealedBy: 24},
	{table: "sales", column: "customer_document", index: "customer_document_index", what: "documents", sealedBy: 24},
	{table: "signing_keys", column: "private_key", what: "signing keys", sealedBy: 25,
		inClearAdvice: "the backups taken before hold them in clear: rotate them (fideliza keys rotate)"},
}

// bytes says the column is sealed.Bytes: its sealed values are raw, not
// base64, and it has no blind index.
func (c sealedColumn) bytes() bool { return c.index == "" }

// resealBatch is how many rows one transaction re-seals: short enough that
// sales keep arriving beside a rotation on SQLite's single writer.
const resealBatch = 500

// ResealProgress reports a re-sealing's progress: done of total values.
type ResealProgress func(done, total int)

// resealAll seals again, under the data key's current key, every value of
// the sealed columns that is under another key or in clear, in batches; each
// row is rewritten only if unchanged since it was read, so a concurrent
// write wins. Interrupted, it resumes where it stopped when run again. It
// returns how many values it re-sealed.
func (db *DB) resealAll(ctx context.Context, progress ResealProgress) (int, error) {
	key, err := sealed.CurrentKeyID()
	if err != nil {
		return 0, err
	}
	return db.reseal(ctx, db.SQL, sealedColumns, db.notUnder(key), progress)
}

// Rotation is what RotateDataKey did.
type Rotation struct {
	KeyID    string // the key every document and signing key is now under
	Resealed int
	// Promoted says the new key was one staged before (keys add-data).
	Promoted bool
	// Resumed says values were still under an older key (an interrupted
	// rotation): they were moved to the newest key, and no key was added.
	Resumed bool
}

// RotateDataKey moves every sealed document and signing key to a new data
// key, and reports progress. The new key is the one staged in the key file,
// if any, else one it adds; it seals in every process reading the file
// within a second. When no key is staged and values are still under an
// older key, it finishes moving them to the current one instead of adding
// another: run again after an interruption, it resumes.
func (db *DB) RotateDataKey(ctx context.Context, progress ResealProgress) (Rotation, error) {
	var r Rotation
	path := sealed.Path()
	promoted, err := sealed.Promote(path)
	if err != nil {
		return r, err
	}
	r.Promoted = promoted
	if !promoted {
		remaining, err := db.RemainingToReseal(ctx)
		if err != nil {
			return r, err
		}
		r.Resumed = remaining > 0
	}
	if !r.Resumed {
		if !promoted {
			if _, err := sealed.AddKey(path, false); err != nil {
				return r, err
			}
		}
		// Let the other processes read the new key; what they seal under
		// the old one meanwhile is caught by the second pass.
		select {
		case <-time.After(2 * sealed.ReloadEvery):
		case <-ctx.Done():
			return r, ctx.Err()
		}
	}
	if r.KeyID, err = sealed.CurrentKeyID(); err != nil {
		return r, err
	}
	n, err := db.resealAll(ctx, progress)
	r.Resealed += n
	if err != nil {
		return r, err
	}
	n, err = db.resealAll(ctx, nil)
	r.Resealed += n
	return r, err
}

// RemainingToReseal counts the values not yet under the current key.
func (db *DB) RemainingToReseal(ctx context.Context) (int, error) {
	key, err := sealed.CurrentKeyID()
	if err != nil {
		return 0, err
	}
	return db.countToReseal(ctx, db.SQL, sealedColumns, db.notUnder(key))
}

// selection is the SQL condition on a sealed column's rows to re-seal.
type selection func(c sealedColumn) string

// notUnder selects the values not sealed under key (key ids are k and
// digits: nothing to escape), and those never indexed.
func (db *DB) notUnder(key string) selection {
	return func(c sealedColumn) string {
		under := fmt.Sprintf("%s NOT LIKE '%s:%%'", db.likeOperand(c), key)
		if c.bytes() {
			return under
		}
		return fmt.Sprintf("(%s OR %s IS NULL)", under, c.index)
	}
}

// inClear selects the values of a database from before sealing: those not
// indexed, or, for a bytes column, those without a key id in front (a DER
// key begins with its SEQUENCE tag, never with a k).
func (db *DB) inClear(c sealedColumn) string {
	if c.bytes() {
		return db.likeOperand(c) + " NOT LIKE 'k%'"
	}
	return c.index + " IS NULL"
}

// likeOperand is the column as LIKE matches it: SQLite's LIKE never matches
// a BLOB that is not valid UTF-8 (a sealed value's random bytes), so a bytes
// column is cast to text there; PostgreSQL's LIKE matches bytea as bytes.
func (db *DB) likeOperand(c sealedColumn) string {
	if c.bytes() && db.Dialect == dialect.SQLite {
		return "CAST(" + c.column + " AS TEXT)"
	}
	return c.column
}

// sealClear seals (and indexes), through the transaction tx of migration
// version, the values stored in clear in the columns that migration seals,
// so that happens once, with the migration or not at all. The data key must
// first open what is already sealed: a wrong key would otherwise seal the
// values nobody could then open.
func (db *DB) sealClear(ctx context.Context, tx *sql.Tx, version int, log *slog.Logger) error {
	var columns []sealedColumn
	for _, c := range sealedColumns {
		if c.sealedBy == version {
			columns = append(columns, c)
		}
	}
	if len(columns) == 0 {
		return nil
	}
	if err := db.checkDataKey(ctx, tx); err != nil {
		return err
	}
	if db.Dialect == dialect.SQLite {
		// Zero the space the clear values leave in their pages, so no
		// copy of the file keeps them.
		var was int
		if err := tx.QueryRowContext(ctx, `PRAGMA secure_delete`).Scan(&was); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `PRAGMA secure_delete = ON`); err != nil {
			return err
		}
		defer tx.ExecContext(context.WithoutCancel(ctx), `PRAGMA secure_delete = `+strconv.Itoa(was))
	}
	for _, c := range columns {
		n, err := db.reseal(ctx, tx, []sealedColumn{c}, db.inClear, nil)
		if err != nil {
			return err
		}
		if n == 0 {
			continue
		}
		if c.inClearAdvice != "" {
			log.Warn("sealed the "+c.what+" stored in clear: "+c.inClearAdvice, "table", c.table, "values", n)
		} else {
			log.Info("sealed the "+c.what+" stored in clear", "table", c.table, "values", n)
		}
	}
	return nil
}

// querier reads and writes re-sealed rows: the pool (a transaction a batch)
// or the migration's transaction.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// reseal re-seals the rows of columns that sel selects.
func (db *DB) reseal(ctx context.Context, q querier, columns []sealedColumn, sel selection, progress ResealProgress) (int, error) {
	total, err := db.countToReseal(ctx, q, columns, sel)
	if err != nil || total == 0 {
		return 0, err
	}
	done := 0
	for _, c := range columns {
		where := sel(c)
		after := ""
		for {
			rows, err := db.sealedRows(ctx, q, c, where, after)
			if err != nil {
				return done, err
			}
			if len(rows) == 0 {
				break
			}
			if err := db.resealRows(ctx, q, c, rows); err != nil {
				return done, err
			}
			done += len(rows)
			after = rows[len(rows)-1].id
			if progress != nil {
				progress(min(done, total), total)
			}
		}
	}
	return done, nil
}

func (db *DB) countToReseal(ctx context.Context, q querier, columns []sealedColumn, sel selection) (int, error) {
	total := 0
	for _, c := range columns {
		var n int
		count := fmt.Sprintf("SELECT count(*) FROM %s WHERE %s <> '' AND ", c.table, c.column) + sel(c)
		if err := q.QueryRowContext(ctx, count).Scan(&n); err != nil {
			return 0, fmt.Errorf("counting the %s to seal: %w", c.table, err)
		}
		total += n
	}
	return total, nil
}

// sealedRow is a row's value as stored: sealed, or in clear.
type sealedRow struct {
	id    string
	value []byte
}

// sealedRows reads the next batch of rows after id after, in id order.
func (db *DB) sealedRows(ctx context.Context, q querier, c sealedColumn, where, after string) ([]sealedRow, error) {
	rs, err := q.QueryContext(ctx, db.rebind(fmt.Sprintf("SELECT id, %s FROM %s WHERE %s <> '' AND %s AND id > ? ORDER BY id LIMIT %d",
		c.column, c.table, c.column, where, resealBatch)), after)
	if err != nil {
		return nil, fmt.Errorf("reading the %s to seal: %w", c.table, err)
	}
	defer rs.Close()
	var out []sealedRow
	for rs.Next() {
		var r sealedRow
		if err := rs.Scan(&r.id, &r.value); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// resealRows rewrites rows, each only if its value is still the one read: in
// a transaction of their own when q is the pool.
func (db *DB) resealRows(ctx context.Context, q querier, c sealedColumn, rows []sealedRow) error {
	if pool, ok := q.(*sql.DB); ok {
		tx, err := pool.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := db.resealRows(ctx, tx, c, rows); err != nil {
			return err
		}
		return tx.Commit()
	}
	set := c.column + " = ?"
	if !c.bytes() {
		set += ", " + c.index + " = ?"
	}
	update := db.rebind(fmt.Sprintf("UPDATE %s SET %s WHERE id = ? AND %s = ?", c.table, set, c.column))
	for _, r := range rows {
		args, err := c.reseal(r.value)
		if err != nil {
			return fmt.Errorf("%s %s: %w", c.table, r.id, err)
		}
		if _, err := q.ExecContext(ctx, update, append(args, r.id, c.stored(r.value))...); err != nil {
			return fmt.Errorf("sealing %s %s: %w", c.table, r.id, err)
		}
	}
	return nil
}

// reseal opens value and seals it again under the current key: the new
// value and, for a text column, the blind index of the clear one.
func (c sealedColumn) reseal(value []byte) ([]any, error) {
	if c.bytes() {
		plain, err := sealed.OpenBytes(value)
		if err != nil {
			return nil, err
		}
		resealed, err := sealed.SealBytes(plain)
		return []any{resealed}, err
	}
	plain, err := sealed.Open(string(value))
	if err != nil {
		return nil, err
	}
	resealed, err := sealed.Seal(plain)
	if err != nil {
		return nil, err
	}
	index, err := sealed.Index(plain)
	return []any{resealed, index}, err
}

// stored is value as the column's driver argument.
func (c sealedColumn) stored(value []byte) any {
	if c.bytes() {
		return value
	}
	return string(value)
}

// UseDataKey installs the data key file the database at rawURL is sealed
// with: path when given, else the file beside an embedded database
// ("fideliza.db.key"), created on first use with mode 0600. PostgreSQL,
// shared by several processes, needs path: each process must hold the same
// key. It returns the file it created, if it did.
func UseDataKey(rawURL, path string) (created string, err error) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return "", err // the database's mistake comes before the key's
	}
	if u.Scheme == "sqlite" {
		if err := sqliteDirExists(u); err != nil {
			return "", err
		}
	}
	if path == "" {
		if path, err = DataKeyPath(rawURL, ""); err != nil {
			return "", err
		}
		exists, err := sealed.Exists(path)
		if err != nil {
			return "", fmt.Errorf("data key file: %w", err)
		}
		if !exists {
			if err := sealed.Create(path); err != nil {
				return "", err
			}
			created = path
		}
	}
	if err := sealed.Install(path); err != nil {
		if created != "" {
			os.Remove(created)
		}
		return "", err
	}
	return created, nil
}

// DataKeyBeside returns the data key file of the database at rawURL (path
// when given, else the default) when it is in the directory of an SQLite
// database file: a copy of that directory then holds the documents and the
// key that unseals them and the token signing keys.
func DataKeyBeside(rawURL, path string) (string, bool) {
	u, err := ParseURL(rawURL)
	if err != nil || u.Scheme != "sqlite" {
		return "", false
	}
	key, err := DataKeyPath(rawURL, path)
	if err != nil {
		return "", false
	}
	keyDir, err1 := filepath.Abs(filepath.Dir(key))
	dbDir, err2 := filepath.Abs(filepath.Dir(sqlitePath(u)))
	return key, err1 == nil && err2 == nil && keyDir == dbDir
}

// DataKeyPath is the data key file of the database at rawURL: path when
// given, else the file beside an embedded database.
func DataKeyPath(rawURL, path string) (string, error) {
	if path != "" {
		return path, nil
	}
	u, err := ParseURL(rawURL)
	if err != nil {
		return "", err
	}
	if u.Scheme != "sqlite" {
		return "", errors.New("a PostgreSQL database needs a data key file: --data-key-file (FIDELIZA_DATA_KEY_FILE); " +
			"create one with `fideliza keys create-data --data-key-file FILE` and give every process of the database a copy")
	}
	return sqlitePath(u) + ".key", nil
}

// checkDataKey makes sure the installed data key opens and indexes the
// documents already sealed, and opens the signing keys, so a wrong or newly
// made key file is refused at start, before a migration seals anything with
// it, rather than failing lookups and tokens later. The migrations run it.
func (db *DB) checkDataKey(ctx context.Context, q querier) error {
	var value, index string
	err := q.QueryRowContext(ctx, `SELECT document, document_index FROM customers WHERE document_index IS NOT NULL LIMIT 1`).
		Scan(&value, &index)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return err
	default:
		if err := opensAndIndexes(value, index); err != nil {
			return wrongDataKey("documents", err)
		}
	}
	var key []byte
	err = q.QueryRowContext(ctx, `SELECT private_key FROM signing_keys LIMIT 1`).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := sealed.OpenBytes(key); err != nil {
		return wrongDataKey("signing keys", err)
	}
	return nil
}

// opensAndIndexes checks the installed data key opens a sealed document and
// gives it the index stored beside it.
func opensAndIndexes(value, index string) error {
	plain, err := sealed.Open(value)
	if err != nil {
		return err
	}
	again, err := sealed.Index(plain)
	if err == nil && again != index {
		err = errors.New("its index key is another one")
	}
	return err
}

func wrongDataKey(what string, err error) error {
	return fmt.Errorf("the data key file does not open this database's %s (%w): start with the key file they were sealed with", what, err)
}
