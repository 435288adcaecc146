package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"

	"github.com/fideliza/fideliza/ent/tenant"
	"github.com/fideliza/fideliza/viewer"
)

// stmtEvents counts, by SQL, the statements a pool's caches prepare and close.
type stmtEvents struct {
	mu               sync.Mutex
	prepared, closed map[string]int
}

func (e *stmtEvents) record(m map[string]int) func(string) {
	return func(q string) {
		e.mu.Lock()
		defer e.mu.Unlock()
		m[q]++
	}
}

func (e *stmtEvents) counts(q string) (prepared, closed int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.prepared[q], e.closed[q]
}

func (e *stmtEvents) totals() (prepared, closed int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, n := range e.prepared {
		prepared += n
	}
	for _, n := range e.closed {
		closed += n
	}
	return prepared, closed
}

func testDSN(t testing.TB) string {
	return "file:" + filepath.Join(t.TempDir(), "test.db") + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
}

// openTestPool opens a one-connection pool on dsn, with a statement cache of
// size entries unless size is 0.
func openTestPool(t testing.TB, dsn string, size int) (*sql.DB, *stmtEvents) {
	t.Helper()
	c, err := sqlite.NewConnector(dsn)
	require.NoError(t, err)
	ev := &stmtEvents{prepared: map[string]int{}, closed: map[string]int{}}
	var db *sql.DB
	if size == 0 {
		db = sql.OpenDB(c)
	} else {
		db = sql.OpenDB(&stmtCacheConnector{Connector: c, size: size, onPrepare: ev.record(ev.prepared), onClose: ev.record(ev.closed)})
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db, ev
}

// createItems makes table item with n rows: id i, name "item<i>", n 0.
func createItems(t testing.TB, db *sql.DB, n int) {
	t.Helper()
	_, err := db.Exec(`CREATE TABLE item (id integer PRIMARY KEY, name text NOT NULL, n integer NOT NULL)`)
	require.NoError(t, err)
	_, err = db.Exec(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?)
		INSERT INTO item (id, name, n) SELECT x, 'item' || x, 0 FROM c`, n)
	require.NoError(t, err)
}

// cacheOf runs fn on the statement cache of conn.
func cacheOf(t testing.TB, conn *sql.Conn, fn func(c *stmtCacheConn)) {
	t.Helper()
	require.NoError(t, conn.Raw(func(dc any) error {
		c, ok := dc.(*stmtCacheConn)
		if !ok {
			return fmt.Errorf("connection is a %T, not a *stmtCacheConn", dc)
		}
		fn(c)
		return nil
	}))
}

func cachedEntry(t testing.TB, conn *sql.Conn, query string) (cs *cachedStmt) {
	t.Helper()
	cacheOf(t, conn, func(c *stmtCacheConn) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if e, ok := c.stmts[query]; ok {
			cs = e.Value.(*cachedStmt)
		}
	})
	return cs
}

func TestCacheable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{`SELECT 1`, true},
		{`SELECT 1;`, true},
		{"SELECT 1 ;; \n\t", true},
		{`SELECT 1; SELECT 2`, false},
		{"CREATE TABLE a (x);\nCREATE TABLE b (y);\n", false},
		{`SELECT ';'`, false}, // uncached, harmlessly
		{``, true},
	} {
		require.Equal(t, tc.want, cacheable(tc.query), "%q", tc.query)
	}
}

// TestStmtCacheReuse runs each statement many times on one connection and
// checks its results and how often it was prepared.
func TestStmtCacheReuse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	nameOf := func(t *testing.T, conn *sql.Conn, query string, id int) (string, error) {
		var name string
		err := conn.QueryRowContext(ctx, query, id).Scan(&name)
		return name, err
	}
	for _, tc := range []struct {
		name         string
		query        string
		wantPrepared int
		run          func(t *testing.T, conn *sql.Conn, query string, i int)
	}{
		{
			name:         "query by primary key",
			query:        `SELECT name FROM item WHERE id = ?`,
			wantPrepared: 1,
			run: func(t *testing.T, conn *sql.Conn, query string, i int) {
				id := i%10 + 1
				name, err := nameOf(t, conn, query, id)
				require.NoError(t, err)
				require.Equal(t, fmt.Sprint("item", id), name)
			},
		},
		{
			name:         "query with no rows",
			query:        `SELECT name FROM item WHERE id = ?`,
			wantPrepared: 1,
			run: func(t *testing.T, conn *sql.Conn, query string, i int) {
				_, err := nameOf(t, conn, query, -i)
				require.ErrorIs(t, err, sql.ErrNoRows)
			},
		},
		{
			name:         "query of several rows",
			query:        `SELECT id FROM item WHERE id > ? ORDER BY id`,
			wantPrepared: 1,
			run: func(t *testing.T, conn *sql.Conn, query string, i int) {
				from := i % 10
				rows, err := conn.QueryContext(ctx, query, from)
				require.NoError(t, err)
				defer rows.Close()
				want := from + 1
				for rows.Next() {
					var id int
					require.NoError(t, rows.Scan(&id))
					require.Equal(t, want, id)
					want++
				}
				require.NoError(t, rows.Err())
				require.Equal(t, 11, want)
			},
		},
		{
			name:         "update",
			query:        `UPDATE item SET n = n + ? WHERE id = ?`,
			wantPrepared: 1,
			run: func(t *testing.T, conn *sql.Conn, query string, i int) {
				res, err := conn.ExecContext(ctx, query, i, i%10+1)
				require.NoError(t, err)
				n, err := res.RowsAffected()
				require.NoError(t, err)
				require.EqualValues(t, 1, n)
			},
		},
		{
			name:         "insert returning",
			query:        `INSERT INTO item (name, n) VALUES (?, 0) RETURNING id`,
			wantPrepared: 1,
			run: func(t *testing.T, conn *sql.Conn, query string, i int) {
				var id int
				require.NoError(t, conn.QueryRowContext(ctx, query, fmt.Sprint("new", i)).Scan(&id))
				require.Equal(t, 11+i, id)
			},
		},
		{
			name:         "trailing semicolon",
			query:        "SELECT name FROM item WHERE id = ?;\n",
			wantPrepared: 1,
			run: func(t *testing.T, conn *sql.Conn, query string, i int) {
				name, err := nameOf(t, conn, query, 3)
				require.NoError(t, err)
				require.Equal(t, "item3", name)
			},
		},
		{
			name:         "script",
			query:        "INSERT INTO item (name, n) VALUES ('a', 0);\nINSERT INTO item (name, n) VALUES ('b', ?);\n",
			wantPrepared: 0,
			run: func(t *testing.T, conn *sql.Conn, query string, i int) {
				_, err := conn.ExecContext(ctx, query, i)
				require.NoError(t, err)
				var n int
				require.NoError(t, conn.QueryRowContext(ctx, `SELECT count(*) FROM item WHERE name IN ('a', 'b')`).Scan(&n))
				require.Equal(t, 2*(i+1), n)
			},
		},
		{
			name:         "semicolon in a literal",
			query:        `SELECT name || ';' FROM item WHERE id = ?`,
			wantPrepared: 0,
			run: func(t *testing.T, conn *sql.Conn, query string, i int) {
				name, err := nameOf(t, conn, query, 4)
				require.NoError(t, err)
				require.Equal(t, "item4;", name)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db, ev := openTestPool(t, testDSN(t), stmtCacheSize)
			createItems(t, db, 10)
			conn, err := db.Conn(ctx)
			require.NoError(t, err)
			defer conn.Close()
			for i := range 50 {
				tc.run(t, conn, tc.query, i)
			}
			prepared, closed := ev.counts(tc.query)
			require.Equal(t, tc.wantPrepared, prepared)
			require.Zero(t, closed)
			require.Equal(t, tc.wantPrepared == 1, cachedEntry(t, conn, tc.query) != nil)
		})
	}
}

// TestStmtCacheSameQueryOpenTwice keeps the rows of a query open while the
// same query runs again in the transaction: the second runs on a statement of
// its own, and both iterate correctly.
func TestStmtCacheSameQueryOpenTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, ev := openTestPool(t, testDSN(t), stmtCacheSize)
	createItems(t, db, 10)
	const q = `SELECT id FROM item WHERE id >= ? ORDER BY id`
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()

	next := func(rows *sql.Rows) int {
		require.True(t, rows.Next(), "rows end early: %v", rows.Err())
		var id int
		require.NoError(t, rows.Scan(&id))
		return id
	}
	r1, err := tx.QueryContext(ctx, q, 1)
	require.NoError(t, err)
	require.Equal(t, 1, next(r1))
	r2, err := tx.QueryContext(ctx, q, 5)
	require.NoError(t, err)
	// A write and the same SQL through Exec while both are open.
	_, err = tx.ExecContext(ctx, `UPDATE item SET n = n + 1 WHERE id = ?`, 9)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, q, 3)
	require.NoError(t, err)
	for want := 2; want <= 10; want++ {
		require.Equal(t, want, next(r1))
		if want+3 <= 10 {
			require.Equal(t, want+3, next(r2))
		}
	}
	require.False(t, r1.Next())
	require.False(t, r2.Next())
	require.NoError(t, errors.Join(r1.Err(), r2.Err(), r1.Close(), r2.Close()))

	// The cached statement is free again and reused.
	var id int
	require.NoError(t, tx.QueryRowContext(ctx, q, 7).Scan(&id))
	require.Equal(t, 7, id)
	require.NoError(t, tx.Commit())
	prepared, closed := ev.counts(q)
	require.Equal(t, 1, prepared)
	require.Zero(t, closed)
}

func TestStmtCacheEviction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const size = 4
	db, ev := openTestPool(t, testDSN(t), size)
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()

	// Ten statements round robin through a cache of four: every run misses.
	const rounds, queries = 3, 10
	for range rounds {
		for k := range queries {
			var got int
			require.NoError(t, conn.QueryRowContext(ctx, fmt.Sprintf(`SELECT ? + %d`, k), 100).Scan(&got))
			require.Equal(t, 100+k, got)
		}
		cacheOf(t, conn, func(c *stmtCacheConn) { require.Equal(t, size, c.len()) })
	}
	prepared, closed := ev.totals()
	require.Equal(t, rounds*queries, prepared)
	require.Equal(t, rounds*queries-size, closed)

	// A statement evicted while its rows are open is closed when they close.
	const series = `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT x FROM c`
	rows, err := conn.QueryContext(ctx, series, 5)
	require.NoError(t, err)
	for k := range size {
		_, err := conn.ExecContext(ctx, fmt.Sprintf(`SELECT %d`, k))
		require.NoError(t, err)
	}
	require.Nil(t, cachedEntry(t, conn, series), "evicted")
	_, closedSeries := ev.counts(series)
	require.Zero(t, closedSeries, "closed with its rows open")
	for want := 1; rows.Next(); want++ {
		var x int
		require.NoError(t, rows.Scan(&x))
		require.Equal(t, want, x)
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	preparedSeries, closedSeries := ev.counts(series)
	require.Equal(t, 1, preparedSeries)
	require.Equal(t, 1, closedSeries)

	var n int
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT count(*) FROM (`+series+`)`, 7).Scan(&n))
	require.Equal(t, 7, n)

	// Closing the connection closes whatever it still caches.
	require.NoError(t, conn.Close())
	require.NoError(t, db.Close())
	prepared, closed = ev.totals()
	require.Equal(t, prepared, closed)
}

// TestStmtCacheSchemaChange changes the schema through the write pool while a
// read connection keeps a statement on the table: SQLite re-prepares it.
func TestStmtCacheSchemaChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, "sqlite://"+filepath.ToSlash(filepath.Join(t.TempDir(), "test.db")))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	_, err = db.SQL.ExecContext(ctx, `CREATE TABLE t (id integer PRIMARY KEY, v text NOT NULL)`)
	require.NoError(t, err)
	_, err = db.SQL.ExecContext(ctx, `INSERT INTO t (id, v) VALUES (1, 'a'), (2, 'b'), (3, 'c')`)
	require.NoError(t, err)

	conn, err := db.Reads.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	const byID, all = `SELECT v FROM t WHERE id = ?`, `SELECT * FROM t WHERE id = ?`
	var first *cachedStmt
	for _, step := range []struct {
		ddl     string
		columns int
	}{
		{"", 2},
		{`ALTER TABLE t ADD COLUMN w text NOT NULL DEFAULT 'x'`, 3},
		{`CREATE INDEX t_v ON t (v)`, 3},
		{`DROP INDEX t_v`, 3},
		{`ALTER TABLE t DROP COLUMN w`, 2},
	} {
		if step.ddl != "" {
			_, err := db.SQL.ExecContext(ctx, step.ddl)
			require.NoError(t, err)
		}
		var v string
		require.NoError(t, conn.QueryRowContext(ctx, byID, 2).Scan(&v), step.ddl)
		require.Equal(t, "b", v)
		rows, err := conn.QueryContext(ctx, all, 3)
		require.NoError(t, err)
		cols, err := rows.Columns()
		require.NoError(t, err)
		require.Len(t, cols, step.columns, step.ddl)
		require.True(t, rows.Next())
		require.NoError(t, rows.Close())

		cs := cachedEntry(t, conn, byID)
		require.NotNil(t, cs)
		if first == nil {
			first = cs
		}
		require.Same(t, first, cs, "the statement is kept across schema changes")
	}
}

// TestStmtCacheInterfaces checks the wrapper shows database/sql the same
// optional interfaces as modernc's own conn and rows.
func TestStmtCacheInterfaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, err := sqlite.NewConnector(testDSN(t))
	require.NoError(t, err)
	inner, err := c.Connect(ctx)
	require.NoError(t, err)
	defer inner.Close()
	wc, err := (&stmtCacheConnector{Connector: c, size: 4}).Connect(ctx)
	require.NoError(t, err)
	defer wc.Close()
	require.IsType(t, &stmtCacheConn{}, wc)

	// The deprecated Execer and Queryer are left out: database/sql uses them
	// only without ExecerContext and QueryerContext.
	connIfaces := map[string]func(any) bool{
		"ConnBeginTx":        is[driver.ConnBeginTx],
		"ConnPrepareContext": is[driver.ConnPrepareContext],
		"ExecerContext":      is[driver.ExecerContext],
		"QueryerContext":     is[driver.QueryerContext],
		"Pinger":             is[driver.Pinger],
		"SessionResetter":    is[driver.SessionResetter],
		"Validator":          is[driver.Validator],
		"NamedValueChecker":  is[driver.NamedValueChecker],
		"io.Closer":          is[interface{ Close() error }],
	}
	for name, has := range connIfaces {
		require.Equal(t, has(inner), has(wc), "conn %s", name)
	}

	rowsIfaces := map[string]func(any) bool{
		"RowsNextResultSet":              is[driver.RowsNextResultSet],
		"RowsColumnTypeDatabaseTypeName": is[driver.RowsColumnTypeDatabaseTypeName],
		"RowsColumnTypeLength":           is[driver.RowsColumnTypeLength],
		"RowsColumnTypeNullable":         is[driver.RowsColumnTypeNullable],
		"RowsColumnTypePrecisionScale":   is[driver.RowsColumnTypePrecisionScale],
		"RowsColumnTypeScanType":         is[driver.RowsColumnTypeScanType],
	}
	const q = `SELECT 1, 'x', 2.5, NULL`
	r1, err := inner.(driver.QueryerContext).QueryContext(ctx, q, nil)
	require.NoError(t, err)
	defer r1.Close()
	r2, err := wc.(driver.QueryerContext).QueryContext(ctx, q, nil)
	require.NoError(t, err)
	defer r2.Close()
	require.IsType(t, &stmtCacheRows{}, r2)
	for name, has := range rowsIfaces {
		require.Equal(t, has(r1), has(r2), "rows %s", name)
	}
	for i := range 4 {
		require.Equal(t, r1.(driver.RowsColumnTypeScanType).ColumnTypeScanType(i), r2.(driver.RowsColumnTypeScanType).ColumnTypeScanType(i))
		l1, ok1 := r1.(driver.RowsColumnTypeLength).ColumnTypeLength(i)
		l2, ok2 := r2.(driver.RowsColumnTypeLength).ColumnTypeLength(i)
		require.Equal(t, []any{l1, ok1}, []any{l2, ok2})
	}
	require.Equal(t, reflect.TypeFor[any](), (&stmtCacheRows{Rows: bareRows{}}).ColumnTypeScanType(0),
		"without the interface, database/sql's default")
}

func is[T any](v any) bool { _, ok := v.(T); return ok }

// bareRows implements driver.Rows alone.
type bareRows struct{ driver.Rows }

// TestStmtCacheConcurrent drives the SQLite database through storage.Open's
// pools and ent from many goroutines at once, reads and writes mixed.
func TestStmtCacheConcurrent(t *testing.T) {
	t.Parallel()
	ctx := viewer.SystemContext(context.Background())
	db, err := Open(ctx, "sqlite://"+filepath.ToSlash(filepath.Join(t.TempDir(), "test.db")))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	_, err = db.Migrate(ctx, slog.New(slog.DiscardHandler))
	require.NoError(t, err)

	const workers, ops = 16, 200
	ids := make([][]string, workers)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				for i := range ops {
					switch {
					case i%4 == 0 || len(ids[w]) == 0:
						var id string
						err := db.InTx(ctx, func(tx Tx) error {
							tn, err := tx.Ent.Tenant.Create().SetName(fmt.Sprintf("w%d-%d", w, i)).Save(ctx)
							if err != nil {
								return err
							}
							id = tn.ID
							var n int
							return tx.SQL.QueryRowContext(ctx, `SELECT count(*) FROM tenants WHERE id = ?`, id).Scan(&n)
						})
						if err != nil {
							return fmt.Errorf("create: %w", err)
						}
						ids[w] = append(ids[w], id)
					case i%4 == 1:
						id := ids[w][i%len(ids[w])]
						tn, err := db.Ent.Tenant.Get(ctx, id)
						if err != nil {
							return fmt.Errorf("get: %w", err)
						}
						if !strings.HasPrefix(tn.Name, fmt.Sprintf("w%d-", w)) {
							return fmt.Errorf("tenant %s is named %q", id, tn.Name)
						}
					case i%4 == 2:
						id := ids[w][i%len(ids[w])]
						if err := db.Ent.Tenant.UpdateOneID(id).SetName(fmt.Sprintf("w%d-%d-renamed", w, i)).Exec(ctx); err != nil {
							return fmt.Errorf("update: %w", err)
						}
					default:
						// IN lists of every length: many distinct SQL strings.
						some := ids[w][:1+i%len(ids[w])]
						got, err := db.Ent.Tenant.Query().Where(tenant.IDIn(some...)).IDs(ctx)
						if err != nil {
							return fmt.Errorf("list: %w", err)
						}
						if len(got) != len(some) {
							return fmt.Errorf("listed %d tenants of %d", len(got), len(some))
						}
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	n, err := db.Ent.Tenant.Query().Count(ctx)
	require.NoError(t, err)
	require.Equal(t, workers*ops/4, n)

	for _, pool := range []*sql.DB{db.SQL, db.Reads} {
		conn, err := pool.Conn(ctx)
		require.NoError(t, err)
		cacheOf(t, conn, func(c *stmtCacheConn) {
			require.NotZero(t, c.len())
			require.LessOrEqual(t, c.len(), stmtCacheSize)
		})
		require.NoError(t, conn.Close())
	}
}

// BenchmarkSQLiteQuery looks a row up by primary key through database/sql,
// with and without the statement cache.
func BenchmarkSQLiteQuery(b *testing.B) {
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		size int
	}{
		{"uncached", 0},
		{"cached", stmtCacheSize},
	} {
		b.Run(bc.name, func(b *testing.B) {
			db, _ := openTestPool(b, testDSN(b), bc.size)
			createItems(b, db, 1000)
			const q = `SELECT id, name, n FROM item WHERE id = ?`
			var (
				id, n int
				name  string
			)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if err := db.QueryRowContext(ctx, q, i%1000+1).Scan(&id, &name, &n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
