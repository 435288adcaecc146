package pos

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/storage"
)

// maxProcessGroup bounds the sales one processing transaction takes.
const maxProcessGroup = 64

// Sale processing commits in groups (kernel.GroupCommit), as registration
// does: the jobs of one tenant's sales that are being worked while its
// previous group is in its transaction are processed together in the next
// one. Every processed sale of a tenant updates the same rows of its
// dashboards' rollups (the day's points, the store's day), which each
// transaction holds until it commits: sales processed one transaction each
// queue on those rows, a commit apiece (on PostgreSQL, a lock wait behind
// every other worker's transaction). A group pays for them once. A group
// that fails is processed again one sale per transaction, so a sale's
// error is only its own.

// saleJob is one processing job waiting for its group.
type saleJob struct {
	ctx    context.Context
	saleID string
	done   chan error // buffered: the group never waits for a job gone
}

// processInGroup processes saleID in its tenant's next group and answers
// that group's outcome for it, or the job's own context's end.
func (a *Service) processInGroup(ctx context.Context, tenantID, saleID string) error {
	if err := ctx.Err(); err != nil { // the job's time is up: its last attempt leaves the sale FAILED
		return err
	}
	job := &saleJob{ctx: ctx, saleID: saleID, done: make(chan error, 1)}
	a.saleJobs.Add(tenantID, job, maxProcessGroup, a.processSaleGroup)
	select {
	case err := <-job.done:
		return err
	case <-ctx.Done():
		// The group may still commit the sale: the job's next attempt
		// then finds it processed.
		return ctx.Err()
	}
}

// processSaleGroup processes a group of one tenant's sales and answers each
// job.
func (a *Service) processSaleGroup(group []*saleJob) {
	// The group runs outside River's worker, whose recovery turned a
	// processing bug's panic into a failed job: it does so here, so that
	// one bad sale does not stop the process.
	defer func() {
		if p := recover(); p != nil {
			a.k.Logger().Error("sale processing panicked", "panic", p, "stack", string(debug.Stack()))
			for _, j := range group {
				select {
				case j.done <- fmt.Errorf("sale processing panicked: %v", p):
				default: // answered already
				}
			}
		}
	}()
	// A job whose time ran out while it waited has answered already.
	var live []*saleJob
	var ids []string
	for _, j := range group {
		if j.ctx.Err() == nil {
			live, ids = append(live, j), append(ids, j.saleID)
		}
	}
	if group = live; len(group) == 0 {
		return
	}
	// The transaction is the group's, not one job's: a job timing out does
	// not roll back the others' sales.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(group[0].ctx), kernel.GroupTimeout)
	defer cancel()
	err := a.processSales(ctx, ids...)
	if err != nil && len(group) > 1 {
		for _, j := range group {
			j.done <- a.processSales(j.ctx, j.saleID)
		}
		return
	}
	for _, j := range group {
		j.done <- err
	}
}

// processingRun is what one processing transaction has done so far. The
// sales it processed are marked PROCESSED as it finishes, in one statement
// (finishProcessing): the rollup triggers of the sales table then run once
// for the run, not once a sale, and the run takes the rows they update (the
// day's sales of a store, which registration updates too) only for its last
// statements, so registrations do not wait for the whole run.
type processingRun struct {
	now       time.Time            // the instant every sale of the run is processed at
	read      map[string]*ent.Sale // its sales waiting as it began, with items, payments and store
	sales     []processedRow
	seen      map[string]bool        // the sales in sales
	customers []string               // their customers, for the audiences
	events    []*ent.EventCreate     // their sale.processed events, written as it finishes
	waiting   map[string][]*ent.Sale // by document index, the waiting sales of the read sales' customers, oldest first
}

// processedRow is what a processed sale's row receives.
type processedRow struct {
	id         string
	credited   int64
	customerID *string
}

func newProcessingRun(now time.Time) *processingRun {
	return &processingRun{now: now, seen: map[string]bool{}}
}

// readSales reads the sales of ids still waiting, with their items,
// payments and store: four statements for the run instead of four a sale.
// With earlier, it also reads every sale still waiting of their customers
// (earlierWaiting): one statement for the run instead of one a sale.
func (r *processingRun) readSales(ctx context.Context, c *ent.Client, ids []string, earlier bool) error {
	rows, err := c.Sale.Query().Where(sale.IDIn(ids...), sale.StatusEQ(sale.StatusRECEIVED)).
		WithItems().WithStore().WithPayments().All(ctx)
	if err != nil {
		return err
	}
	r.read = make(map[string]*ent.Sale, len(rows))
	var docs []string
	for _, s := range rows {
		r.read[s.ID] = s
		if s.CustomerDocumentIndex != "" {
			docs = append(docs, s.CustomerDocumentIndex)
		}
	}
	if !earlier || len(docs) == 0 {
		return nil
	}
	// From the partial index of the sales not processed (processed_at IS
	// NULL, a condition without a parameter, which both planners match).
	waiting, err := c.Sale.Query().Where(sale.CustomerDocumentIndexIn(slices.Compact(slices.Sorted(slices.Values(docs)))...),
		sale.ProcessedAtIsNil(), sale.StatusEQ(sale.StatusRECEIVED)).
		Order(sale.ByCreatedAt(), sale.ByID()).Select(sale.FieldCreatedAt, sale.FieldCustomerDocumentIndex).All(ctx)
	if err != nil {
		return err
	}
	r.waiting = make(map[string][]*ent.Sale, len(docs))
	for _, w := range waiting {
		r.waiting[w.CustomerDocumentIndex] = append(r.waiting[w.CustomerDocumentIndex], w)
	}
	return nil
}

// earlierWaiting returns the ids of the sales of s's customer registered
// before s and waiting as the run began, oldest first. They were all
// registered before s, so before the run read its sales; those the run
// has processed since are skipped as it reaches them.
func (r *processingRun) earlierWaiting(s *ent.Sale) []string {
	var ids []string
	for _, w := range r.waiting[s.CustomerDocumentIndex] {
		if !w.CreatedAt.Before(s.CreatedAt) && (!w.CreatedAt.Equal(s.CreatedAt) || w.ID >= s.ID) {
			break
		}
		ids = append(ids, w.ID)
	}
	return ids
}

// sale is a sale of the run as it read it, or read now when it did not (it
// was not waiting, or is not the tenant's: the error says so).
func (r *processingRun) sale(ctx context.Context, c *ent.Client, id string) (*ent.Sale, error) {
	if s := r.read[id]; s != nil {
		return s, nil
	}
	return c.Sale.Get(ctx, id)
}

// processed says the run has already processed the sale.
func (r *processingRun) processed(saleID string) bool { return r.seen[saleID] }

// add records a sale processed, crediting credited points to cust (nil for
// a sale without a known customer).
func (r *processingRun) add(saleID string, credited int64, cust *ent.Customer) {
	row := processedRow{id: saleID, credited: credited}
	if cust != nil {
		row.customerID = &cust.ID
		r.customers = append(r.customers, cust.ID)
	}
	r.sales = append(r.sales, row)
	r.seen[saleID] = true
}

// salesPerStatement bounds the sales one statement of finishProcessing
// marks (three parameters each; SQLite allows 32,766).
const salesPerStatement = 500

// finishProcessing marks the run's sales PROCESSED, with their points and
// customer, writes their sale.processed events in one statement, then counts their customers' purchases and has the audiences
// see them. The rows were read (and on
// PostgreSQL locked) through ent in the tenant's viewer; the statement is
// written by hand because ent sets one value for every row an update
// touches. A row no longer RECEIVED means another transaction got there
// first: the run is rolled back and runs again.
func (a *Service) finishProcessing(ctx context.Context, tx storage.Tx, run *processingRun) error {
	for part := range slices.Chunk(run.sales, salesPerStatement) {
		q, args := markProcessed(part, run.now)
		res, err := tx.Ent.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("marking %d sales processed: %w", len(part), err)
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(len(part)) {
			return errors.Join(storage.ErrConflict, err)
		}
	}
	for part := range slices.Chunk(run.events, salesPerStatement) {
		if err := tx.Ent.Event.CreateBulk(part...).Exec(ctx); err != nil {
			return err
		}
	}
	if err := customers.RecountPurchases(ctx, tx.Ent, run.customers...); err != nil {
		return err
	}
	return a.Audiences.Refresh(ctx, tx, run.customers...)
}

// markProcessed is the statement and arguments that mark rows PROCESSED at
// now: points as integer literals (a parameter in a CASE has no type for
// PostgreSQL to assign to a bigint), ids and customers as parameters.
func markProcessed(rows []processedRow, now time.Time) (string, []any) {
	var credited, customers, ids strings.Builder
	args := []any{sale.StatusPROCESSED, now, sale.StatusRECEIVED}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	for i, r := range rows {
		id := arg(r.id)
		fmt.Fprintf(&credited, " WHEN %s THEN %d", id, r.credited)
		if r.customerID != nil {
			fmt.Fprintf(&customers, " WHEN %s THEN %s", id, arg(*r.customerID))
		}
		if i > 0 {
			ids.WriteString(", ")
		}
		ids.WriteString(id)
	}
	q := "UPDATE sales SET status = $1, processed_at = $2, points_credited = CASE id" + credited.String() + " END"
	if customers.Len() > 0 {
		q += ", customer_id = CASE id" + customers.String() + " ELSE customer_id END"
	}
	return q + " WHERE status = $3 AND id IN (" + ids.String() + ")", args
}
