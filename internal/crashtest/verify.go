package crashtest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
)

// State is the progress the database shows.
type State struct {
	Processed, Failed int
	JobsLeft          int // process_sale and process_sale_return jobs not completed
	Running           int // those running (or left running by a killed process)
	// RunningUnprocessed are running jobs whose sale is not processed: a
	// killed process was inside (or before) their transaction.
	RunningUnprocessed int
	Retried            int // process_sale jobs on their second attempt or later
}

// Open opens the database for one look; the caller closes it.
func Open(t *testing.T, dbURL string) *storage.DB {
	t.Helper()
	db, err := storage.Open(context.Background(), dbURL)
	require.NoError(t, err)
	return db
}

// Counts reads the progress of the sales and their jobs.
func Counts(t *testing.T, dbURL string) State {
	t.Helper()
	db := Open(t, dbURL)
	defer db.Close()
	var st State
	require.NoError(t, db.Reads.QueryRow(`SELECT
		(SELECT count(*) FROM sales WHERE status NOT IN ('RECEIVED', 'FAILED')),
		(SELECT count(*) FROM sales WHERE status = 'FAILED'),
		(SELECT count(*) FROM river_job WHERE kind IN ('process_sale', 'process_sale_return') AND state <> 'completed'),
		(SELECT count(*) FROM river_job WHERE kind IN ('process_sale', 'process_sale_return') AND state = 'running'),
		(SELECT count(*) FROM river_job WHERE kind = 'process_sale' AND attempt > 1)`).
		Scan(&st.Processed, &st.Failed, &st.JobsLeft, &st.Running, &st.Retried))

	// Which of the running jobs were cut off before their transaction
	// committed: their sale is still RECEIVED.
	received := map[string]bool{}
	rows, err := db.Reads.Query(`SELECT id FROM sales WHERE status = 'RECEIVED'`)
	require.NoError(t, err)
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		received[id] = true
	}
	require.NoError(t, rows.Err())
	rows, err = db.Reads.Query(`SELECT CAST(args AS TEXT) FROM river_job WHERE kind = 'process_sale' AND state = 'running'`)
	require.NoError(t, err)
	for rows.Next() {
		var raw string
		require.NoError(t, rows.Scan(&raw))
		var args jobs.ProcessSale
		require.NoError(t, json.Unmarshal([]byte(raw), &args))
		if received[args.SaleID] {
			st.RunningUnprocessed++
		}
	}
	require.NoError(t, rows.Err())
	return st
}

// Verify checks the outcome against what was registered: each sale
// processed once, with one credit entry of its points and one
// sale.processed event, and balances that are the sum of the ledger.
func Verify(t *testing.T, dbURL string, sales []Sale) {
	t.Helper()
	db := Open(t, dbURL)
	defer db.Close()
	q := func(query string, args ...any) *sql.Rows {
		rows, err := db.Reads.Query(query, args...)
		require.NoError(t, err)
		return rows
	}

	type outcome struct {
		status   string
		credited int64
		customer sql.NullString
	}
	got := map[string]outcome{}
	rows := q(`SELECT id, status, points_credited, customer_id FROM sales`)
	for rows.Next() {
		var id string
		var o outcome
		require.NoError(t, rows.Scan(&id, &o.status, &o.credited, &o.customer))
		got[id] = o
	}
	require.NoError(t, rows.Err())
	require.Len(t, got, len(sales), "sales stored")

	type credit struct{ n, points int64 }
	credits := map[string]credit{}
	rows = q(`SELECT source_id, count(*), sum(points) FROM points_entries
		WHERE kind = 'credit' AND source_kind = 'sale' GROUP BY source_id`)
	for rows.Next() {
		var id string
		var c credit
		require.NoError(t, rows.Scan(&id, &c.n, &c.points))
		credits[id] = c
	}
	require.NoError(t, rows.Err())

	events := map[string]int{}
	rows = q(`SELECT subject_id, count(*) FROM events WHERE type = 'sale.processed' GROUP BY subject_id`)
	for rows.Next() {
		var id string
		var n int
		require.NoError(t, rows.Scan(&id, &n))
		events[id] = n
	}
	require.NoError(t, rows.Err())

	type reversal struct{ n, points int64 }
	reversals := map[string]reversal{}
	rows = q(`SELECT source_id, count(*), -sum(points) FROM points_entries
		WHERE kind = 'reversal' AND source_kind = 'return' GROUP BY source_id`)
	for rows.Next() {
		var id string
		var r reversal
		require.NoError(t, rows.Scan(&id, &r.n, &r.points))
		reversals[id] = r
	}
	require.NoError(t, rows.Err())
	applied := map[string]int{}
	rows = q(`SELECT id, status FROM sale_returns`)
	for rows.Next() {
		var id, status string
		require.NoError(t, rows.Scan(&id, &status))
		if status == "PROCESSED" {
			applied[id]++
		}
	}
	require.NoError(t, rows.Err())

	want := map[string]int64{} // customer id → expected balance
	var problems []string
	returns := 0
	for _, s := range sales {
		want[s.Customer] += s.Points - s.Reversed
		o := got[s.ID]
		if o.status != s.Status || o.credited != s.Points || o.customer.String != s.Customer {
			problems = append(problems, fmt.Sprintf("sale %s: status %s, %d points credited to %q; want %s, %d to %s",
				s.ID, o.status, o.credited, o.customer.String, s.Status, s.Points, s.Customer))
		}
		if s.ReturnID != "" {
			returns++
			if r := reversals[s.ReturnID]; r.n != 1 || r.points != s.Reversed || applied[s.ReturnID] != 1 {
				problems = append(problems, fmt.Sprintf("return %s of sale %s: %d reversals of %d points, applied %d; want 1 of %d, applied once",
					s.ReturnID, s.ID, r.n, r.points, applied[s.ReturnID], s.Reversed))
			}
		}
		if c := credits[s.ID]; c.n != 1 || c.points != s.Points {
			problems = append(problems, fmt.Sprintf("sale %s: %d credit entries of %d points; want 1 of %d", s.ID, c.n, c.points, s.Points))
		}
		if n := events[s.ID]; n != 1 {
			problems = append(problems, fmt.Sprintf("sale %s: %d sale.processed events; want 1", s.ID, n))
		}
	}
	if len(problems) > 0 {
		t.Fatalf("%d problems, the first:\n%s", len(problems), strings.Join(problems[:min(len(problems), 10)], "\n"))
	}
	require.Len(t, credits, len(sales), "credit entries of sales that do not exist")
	require.Len(t, reversals, returns, "reversals of returns that do not exist")
	require.Len(t, events, len(sales), "sale.processed events of sales that do not exist")

	var total int64
	rows = q(`SELECT c.id, c.points_balance, COALESCE((SELECT sum(e.points) FROM points_entries e WHERE e.customer_id = c.id), 0)
		FROM customers c`)
	n := 0
	for rows.Next() {
		var id string
		var balance, ledger int64
		require.NoError(t, rows.Scan(&id, &balance, &ledger))
		require.Equal(t, ledger, balance, "customer %s: balance is the sum of the ledger", id)
		require.Equal(t, want[id], balance, "customer %s: balance is the points of the sales", id)
		total += balance
		n++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, Customers, n)

	var other int
	require.NoError(t, db.Reads.QueryRow(`SELECT count(*) FROM points_entries
		WHERE NOT (kind = 'credit' AND source_kind = 'sale') AND NOT (kind = 'reversal' AND source_kind = 'return')`).Scan(&other))
	require.Zero(t, other, "no ledger entries but the sales' credits and the returns' reversals")
	var lots int
	var remaining int64
	require.NoError(t, db.Reads.QueryRow(`SELECT count(*), COALESCE(sum(remaining), 0) FROM points_lots`).Scan(&lots, &remaining))
	require.Equal(t, len(sales), lots, "one lot per credit")
	require.Equal(t, total, remaining, "the lots hold the balance")
}
