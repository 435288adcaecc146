package storage_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestCancelledQueriesLeaveThePoolHealthy: with the pool saturated, requests
// cancelled mid-query (clients hanging up) must not hand the requests
// waiting behind them a dead connection.
func TestCancelledQueriesLeaveThePoolHealthy(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		sleep := `SELECT 1 FROM (SELECT count(*) FROM tenants) x`
		rowsQuery := `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) SELECT i FROM n`
		if db.Dialect == "postgres" {
			sleep = `SELECT 1 FROM pg_sleep(0.02)`
			rowsQuery = `SELECT generate_series(1, 2000)`
		}
		ctx := context.Background()
		deadline := time.Now().Add(2 * time.Second)
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for g := range 96 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(deadline) {
					switch g % 4 {
					case 0: // a client that hangs up mid-query
						qctx, cancel := context.WithTimeout(ctx, time.Duration(1+rand.IntN(20))*time.Millisecond)
						_, _ = db.SQL.ExecContext(qctx, sleep)
						cancel()
						continue
					case 1: // a client that hangs up while rows are read
						qctx, cancel := context.WithTimeout(ctx, time.Duration(1+rand.IntN(5))*time.Millisecond)
						if rows, err := db.SQL.QueryContext(qctx, rowsQuery); err == nil {
							for rows.Next() {
							}
							rows.Close()
						}
						cancel()
						continue
					case 2: // a client that hangs up during a transaction
						qctx, cancel := context.WithTimeout(ctx, time.Duration(1+rand.IntN(20))*time.Millisecond)
						if tx, err := db.SQL.BeginTx(qctx, nil); err == nil {
							if _, err := tx.ExecContext(qctx, sleep); err == nil {
								_ = tx.Commit()
							} else {
								_ = tx.Rollback()
							}
						}
						cancel()
						continue
					}
					var one int
					if err := db.SQL.QueryRowContext(ctx, sleep).Scan(&one); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	})
}

// TestSQLiteReadConnectionsStayOpen: concurrent reads reuse the read pool's
// connections instead of closing the ones beyond database/sql's default
// idle count and opening new ones (each open runs the pragmas again and
// starts with an empty statement cache).
func TestSQLiteReadConnectionsStayOpen(t *testing.T) {
	t.Parallel()
	db := storagetest.Open(t, "sqlite3")
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for range 50 {
				var n int
				require.NoError(t, db.Reads.QueryRow(`SELECT count(*) FROM tenants`).Scan(&n))
			}
		})
	}
	wg.Wait()
	st := db.Reads.Stats()
	require.Zero(t, st.MaxIdleClosed, "read connections closed for want of idle slots")
	require.LessOrEqual(t, st.OpenConnections, 9)
}
