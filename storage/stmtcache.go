package storage

import (
	"container/list"
	"context"
	"database/sql"
	"database/sql/driver"
	"reflect"
	"strings"
	"sync"

	"modernc.org/sqlite"

	"github.com/fideliza/fideliza/tracing"
)

// stmtCacheSize bounds the statements kept per SQLite connection: ent builds
// IN (?, ?, …) lists of any length, so the set of SQL strings is unbounded.
const stmtCacheSize = 256

// openCachedSQLite opens a pool of SQLite connections that keep their
// prepared statements. modernc.org/sqlite parses the SQL again on every
// QueryContext and ExecContext, which dominated the CPU profile under load.
func openCachedSQLite(dsn string) (*sql.DB, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return tracing.OpenDB(&stmtCacheConnector{Connector: c, size: stmtCacheSize}), nil
}

// stmtCacheConnector wraps each connection of Connector in a stmtCacheConn.
type stmtCacheConnector struct {
	driver.Connector
	size int
	// onPrepare and onClose, when set, see every statement the caches
	// prepare and close (tests).
	onPrepare, onClose func(query string)
}

func (c *stmtCacheConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	inner, ok := conn.(sqliteConn)
	if _, checks := conn.(driver.NamedValueChecker); !ok || checks {
		// Not the conn this wrapper was written for: wrapping it would change
		// what database/sql sees, so it is used as it is.
		return conn, nil
	}
	return &stmtCacheConn{
		sqliteConn: inner,
		connector:  c,
		stmts:      make(map[string]*list.Element),
	}, nil
}

// sqliteConn is the set of interfaces modernc's conn implements that
// database/sql looks for (its deprecated Execer and Queryer are never used
// beside the context ones). stmtCacheConn implements exactly these: one more
// or one fewer would change how database/sql drives the connection.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// preparedStmt is what the cache needs of a statement modernc prepares.
type preparedStmt interface {
	driver.Stmt
	driver.StmtQueryContext
	driver.StmtExecContext
}

// stmtCacheConn runs each single statement through a statement prepared once
// per connection and kept in an LRU of at most connector.size entries.
type stmtCacheConn struct {
	sqliteConn
	connector *stmtCacheConnector

	// database/sql uses a conn from one goroutine at a time, but it closes
	// Rows from its context watcher; mu keeps the bookkeeping safe anyway.
	mu    sync.Mutex
	lru   list.List // of *cachedStmt, most recently used first
	stmts map[string]*list.Element
}

type cachedStmt struct {
	query   string
	stmt    preparedStmt
	busy    bool // its rows are open: it cannot run again until they close
	evicted bool // out of the cache: close it when its rows close
}

// cacheable reports whether query is a single statement. modernc runs a
// multi-statement script (a migration) by re-parsing it statement by
// statement on every execution, so caching one gains nothing; any ';' before
// the trailing ones, even inside a literal, sends the query uncached.
func cacheable(query string) bool {
	return !strings.Contains(strings.TrimRight(query, " \t\r\n;"), ";")
}

func (c *stmtCacheConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs := c.acquire(ctx, query)
	if cs == nil {
		return c.sqliteConn.QueryContext(ctx, query, args)
	}
	rows, err := cs.stmt.QueryContext(ctx, args)
	if err != nil {
		c.release(cs)
		return nil, err
	}
	return &stmtCacheRows{Rows: rows, conn: c, stmt: cs}, nil
}

func (c *stmtCacheConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs := c.acquire(ctx, query)
	if cs == nil {
		return c.sqliteConn.ExecContext(ctx, query, args)
	}
	defer c.release(cs)
	return cs.stmt.ExecContext(ctx, args)
}

// acquire returns the cached statement of query marked busy, preparing and
// caching it first if needed. nil means running query uncached on the inner
// conn: a script, a statement that failed to prepare (the inner conn reports
// the error), or one whose cached statement still has rows open (the inner
// conn prepares a one-off statement, finalised when its rows close).
//
// modernc's statements always answer NumInput -1, so that is no sign of a
// script; database/sql does not check argument counts on this path anyway.
func (c *stmtCacheConn) acquire(ctx context.Context, query string) *cachedStmt {
	if !cacheable(query) {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.stmts[query]; ok {
		cs := e.Value.(*cachedStmt)
		if cs.busy {
			return nil
		}
		cs.busy = true
		c.lru.MoveToFront(e)
		return cs
	}
	s, err := c.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	ps, ok := s.(preparedStmt)
	if !ok {
		_ = s.Close()
		return nil
	}
	if c.connector.onPrepare != nil {
		c.connector.onPrepare(query)
	}
	cs := &cachedStmt{query: query, stmt: ps, busy: true}
	c.stmts[query] = c.lru.PushFront(cs)
	for c.lru.Len() > max(c.connector.size, 1) {
		old := c.lru.Remove(c.lru.Back()).(*cachedStmt)
		delete(c.stmts, old.query)
		old.evicted = true
		if !old.busy {
			c.closeStmt(old)
		}
	}
	return cs
}

// release marks cs free again, closing it if it was evicted meanwhile.
func (c *stmtCacheConn) release(cs *cachedStmt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs.busy = false
	if cs.evicted {
		c.closeStmt(cs)
	}
}

func (c *stmtCacheConn) closeStmt(cs *cachedStmt) error {
	if c.connector.onClose != nil {
		c.connector.onClose(cs.query)
	}
	return cs.stmt.Close()
}

// Close closes the cached statements, then the connection. database/sql
// closes a connection only once no rows of it are open.
func (c *stmtCacheConn) Close() error {
	c.mu.Lock()
	var err error
	for e := c.lru.Front(); e != nil; e = e.Next() {
		cs := e.Value.(*cachedStmt)
		cs.evicted = true
		if e := c.closeStmt(cs); e != nil && err == nil {
			err = e
		}
	}
	c.lru.Init()
	clear(c.stmts)
	c.mu.Unlock()
	if e := c.sqliteConn.Close(); e != nil {
		return e
	}
	return err
}

// len is the number of cached statements (tests).
func (c *stmtCacheConn) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// stmtCacheRows frees its cached statement on Close. It implements the
// column-type interfaces modernc's rows do (and not RowsNextResultSet, which
// they do not); should the inner rows lack one, it answers what database/sql
// assumes in its absence.
type stmtCacheRows struct {
	driver.Rows
	conn *stmtCacheConn
	stmt *cachedStmt
}

func (r *stmtCacheRows) Close() error {
	err := r.Rows.Close()
	if r.stmt != nil {
		r.conn.release(r.stmt)
		r.stmt = nil
	}
	return err
}

func (r *stmtCacheRows) ColumnTypeDatabaseTypeName(index int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(index)
	}
	return ""
}

func (r *stmtCacheRows) ColumnTypeLength(index int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(index)
	}
	return 0, false
}

func (r *stmtCacheRows) ColumnTypeNullable(index int) (nullable, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(index)
	}
	return false, false
}

func (r *stmtCacheRows) ColumnTypePrecisionScale(index int) (precision, scale int64, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(index)
	}
	return 0, 0, false
}

func (r *stmtCacheRows) ColumnTypeScanType(index int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(index)
	}
	return reflect.TypeFor[any]()
}

var (
	_ sqliteConn                            = (*stmtCacheConn)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*stmtCacheRows)(nil)
	_ driver.RowsColumnTypeLength           = (*stmtCacheRows)(nil)
	_ driver.RowsColumnTypeNullable         = (*stmtCacheRows)(nil)
	_ driver.RowsColumnTypePrecisionScale   = (*stmtCacheRows)(nil)
	_ driver.RowsColumnTypeScanType         = (*stmtCacheRows)(nil)
)
