package worker_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/schema"
	"github.com/fideliza/fideliza/internal/crashtest"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
	"github.com/fideliza/fideliza/worker"
)

// The fairness test's sizes: tenant A's backlog, the customers it is spread
// over, the rows written per statement, the window its jobs are shuffled
// in, and how long tenant B's sale may wait behind A's backlog (issue 35).
const (
	fairBacklog   = 20_000
	fairCustomers = 1000
	fairChunk     = 500
	fairShuffle   = 2 * fairCustomers
	fairBound     = 2 * time.Second
)

// TestFairAcrossTenants: tenant A has 20,000 sales queued when the workers
// start; tenant B's sale, registered then, is processed within fairBound
// while most of A's still wait, and every sale of A is then processed
// exactly once (one PROCESSED status, one credit, one sale.processed event)
// and in the order its customer's sales were registered.
//
// A's backlog is written in bulk (sales, lines, then their jobs placed by a
// jobs.Fair of its own, as another serve process would have); within each
// window of fairShuffle sales the jobs are placed in a shuffled order, as
// sales registered at once through several processes are, so that a
// customer's later sale is often queued before an earlier one. Not
// parallel: it runs alone, before the package's parallel tests.
func TestFairAcrossTenants(t *testing.T) {
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) { fairAcrossTenants(t, storagetest.Open(t, d)) })
	}
}

// fairAcrossTenants is TestFairAcrossTenants on db.
func fairAcrossTenants(t *testing.T, db *storage.DB) {
	ctx := context.Background()
	a := app.New(&app.Config{DB: db, Log: slog.New(slog.DiscardHandler)})
	client, err := worker.NewClient(a, worker.Config{Work: true, MaxWorkers: 20})
	require.NoError(t, err)
	tenantA := fairTenant(t, a, "Mercado A", fairCustomers)
	tenantB := fairTenant(t, a, "Mercado B", 1)

	began := time.Now()
	fairBacklogOf(t, db, tenantA)
	require.NoError(t, db.Analyze(ctx, "ANALYZE")) // SQLite's planner statistics, as serve keeps them
	t.Logf("%s: %d sales of A queued in %s", db.Dialect, fairBacklog, time.Since(began).Round(time.Millisecond))

	require.NoError(t, client.Start(ctx))
	defer func() { require.NoError(t, client.Stop(ctx)) }()
	b, err := a.POS.RegisterSale(tenantB.ctx, fairSale(tenantB, 0))
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		b, err = db.Ent.Sale.Get(tenantB.ctx, b.ID)
		require.NoError(c, err)
		assert.NotEqual(c, sale.StatusRECEIVED, b.Status, "B's sale is processed")
	}, time.Minute, 20*time.Millisecond)
	waiting, err := db.Ent.Sale.Query().Where(sale.StatusEQ(sale.StatusRECEIVED)).Count(tenantA.ctx)
	require.NoError(t, err)
	require.Equal(t, sale.StatusPROCESSED, b.Status)
	waited := b.ProcessedAt.Sub(b.CreatedAt)
	t.Logf("%s: B's sale processed %s after it was registered, %d of A's still waiting", db.Dialect, waited.Round(time.Millisecond), waiting)
	require.LessOrEqual(t, waited, fairBound, "B's sale waited behind A's backlog")
	require.Greater(t, waiting, fairBacklog/2, "B's sale went ahead of most of A's backlog")

	drained := time.Now()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		waiting, err = db.Ent.Sale.Query().Where(sale.StatusEQ(sale.StatusRECEIVED)).Count(tenantA.ctx)
		require.NoError(c, err)
		assert.Zero(c, waiting, "A's backlog is processed")
	}, 10*time.Minute, 500*time.Millisecond) // each count reads the backlog: not too often
	t.Logf("%s: A's backlog processed in %s", db.Dialect, time.Since(drained).Round(time.Millisecond))
	fairVerify(t, db, tenantA)
}

// fairBacklogOf writes tenant A's fairBacklog sales (the i-th to customer
// i modulo its customers, registered in i's order) and queues their jobs.
func fairBacklogOf(t *testing.T, db *storage.DB, tn fairTenantOf) {
	t.Helper()
	rc, err := jobs.NewInsertClient(db, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	var placer jobs.Fair
	shuffle := rand.New(rand.NewPCG(35, 35))
	registered := time.Now().Add(-time.Hour).UTC()
	for from := 0; from < fairBacklog; from += fairChunk {
		// The sales written here need not be looked up again as their lines
		// are linked to them (schema.RememberSeen), as registration does.
		ctx := schema.RememberVisible(tn.ctx)
		require.NoError(t, db.InTx(ctx, func(tx storage.Tx) error {
			sales := make([]*ent.SaleCreate, fairChunk)
			for k := range sales {
				i := from + k
				l := crashtest.Line(i)
				sales[k] = tx.Ent.Sale.Create().SetStoreID(tn.storeID).SetExternalID(fmt.Sprint(100000 + i)).
					SetPosID("PDV-1").SetChannel("STORE").SetCustomerDocument(tn.docs[i%len(tn.docs)]).
					SetCustomerDocumentType(sale.CustomerDocumentTypeCPF).SetSoldAt(registered).
					SetAmount(l.Amount).SetAmountPayable(l.Amount).SetDiscountAmount(decimal.Zero).
					SetCreatedAt(registered.Add(time.Duration(i) * time.Millisecond))
			}
			saved, err := tx.Ent.Sale.CreateBulk(sales...).Save(ctx)
			if err != nil {
				return err
			}
			for _, s := range saved {
				schema.RememberSeen(ctx, s.ID)
			}
			items := make([]*ent.SaleItemCreate, len(saved))
			ids := make([]string, len(saved))
			for k, s := range saved {
				l := crashtest.Line(from + k)
				items[k] = tx.Ent.SaleItem.Create().SetSaleID(s.ID).SetLineID("1").SetGtin("7891000100103").
					SetDescription("Café 500 g").SetUnitPrice(l.Price).SetQuantity(l.Qty).
					SetDiscountAmount(decimal.Zero).SetDiscounts([]byte("[]"))
				ids[k] = s.ID
			}
			if err := tx.Ent.SaleItem.CreateBulk(items...).Exec(ctx); err != nil {
				return err
			}
			for w := 0; w < len(ids); w += fairShuffle {
				window := ids[w:min(w+fairShuffle, len(ids))]
				shuffle.Shuffle(len(window), func(i, j int) { window[i], window[j] = window[j], window[i] })
			}
			head, err := jobs.SaleQueueHead(ctx, rc, tx.SQL)
			if err != nil {
				return err
			}
			_, err = rc.InsertManyTx(ctx, tx.SQL, placer.SaleJobs(tn.id, head, ids))
			return err
		}))
	}
}

// fairVerify checks each of tenant A's sales was processed once, in its
// customer's order.
func fairVerify(t *testing.T, db *storage.DB, tn fairTenantOf) {
	t.Helper()
	sales, err := db.Ent.Sale.Query().Order(sale.ByCreatedAt(), sale.ByID()).All(tn.ctx)
	require.NoError(t, err)
	require.Len(t, sales, fairBacklog)
	last := map[string]*ent.Sale{} // customer → their sale processed last
	for _, s := range sales {
		require.Equal(t, sale.StatusPROCESSED, s.Status, s.ID)
		require.NotNil(t, s.CustomerID, s.ID)
		if prev := last[*s.CustomerID]; prev != nil {
			require.False(t, s.ProcessedAt.Before(*prev.ProcessedAt),
				"sale %s (registered after %s) was processed before it", s.ID, prev.ID)
		}
		last[*s.CustomerID] = s
	}
	require.Len(t, last, fairCustomers)
	for _, c := range []struct {
		what  string
		query func() ([]string, error)
	}{
		{"credits", func() ([]string, error) {
			return db.Ent.PointsEntry.Query().Where(pointsentry.KindEQ(pointsentry.KindCredit),
				pointsentry.SourceKindEQ(pointsentry.SourceKindSale)).Select(pointsentry.FieldSourceID).Strings(tn.ctx)
		}},
		{"sale.processed events", func() ([]string, error) {
			return db.Ent.Event.Query().Where(event.Type("sale.processed")).Select(event.FieldSubjectID).Strings(tn.ctx)
		}},
	} {
		ids, err := c.query()
		require.NoError(t, err)
		seen := map[string]bool{}
		for _, id := range ids {
			require.False(t, seen[id], "%s: sale %s twice", c.what, id)
			seen[id] = true
		}
		require.Len(t, seen, fairBacklog, c.what)
	}
}

// fairTenantOf is a tenant of the fairness test: its id, its context, its
// store and its customers' documents.
type fairTenantOf struct {
	id, storeID string
	ctx         context.Context
	docs        []string
}

// fairTenant creates a tenant, its store LOJA-01 and n customers.
func fairTenant(t *testing.T, a *app.App, name string, n int) fairTenantOf {
	t.Helper()
	sys := viewer.SystemContext(context.Background())
	tn, err := a.Backoffice.CreateTenant(sys, name, nil)
	require.NoError(t, err)
	st, err := a.Backoffice.CreateStore(sys, tn.ID, "LOJA-01", "Loja Centro")
	require.NoError(t, err)
	out := fairTenantOf{id: tn.ID, storeID: st.ID, ctx: viewer.TenantContext(context.Background(), tn.ID), docs: make([]string, n)}
	for i := range n {
		out.docs[i] = crashtest.CPF(i)
		_, err := a.Customers.CreateCustomer(out.ctx, customers.CustomerInput{Name: opt.Of(fmt.Sprintf("Cliente %d", i)),
			Email: opt.Of(fmt.Sprintf("cliente%d@example.com", i)), CPF: opt.Of(out.docs[i])})
		require.NoError(t, err)
	}
	return out
}

// fairSale is the i-th sale of tn, to customer i modulo its customers, as
// its point of sale sends it.
func fairSale(tn fairTenantOf, i int) pos.SaleInput {
	l := crashtest.Line(i)
	soldAt := time.Now().Add(-time.Minute)
	return pos.SaleInput{
		Protocol: "PARTNER_V1", Customer: &pos.POSCustomer{ID: tn.docs[i%len(tn.docs)], Type: "CPF"},
		SaleID: fmt.Sprint(100000 + i), StoreID: "LOJA-01", PosID: "PDV-1", Channel: "STORE",
		Date: &soldAt, Amount: &l.Amount, AmountPayable: &l.Amount,
		Items:    []pos.SaleItemInput{{ID: "1", GTIN: "7891000100103", Description: "Café 500 g", UnitPrice: &l.Price, Quantity: &l.Qty}},
		Payments: []pos.SalePaymentInput{{ID: "1", Amount: &l.Amount, Method: "PIX"}},
	}
}
