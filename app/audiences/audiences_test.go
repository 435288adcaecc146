package audiences_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/store"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// audienceShop is a tenant with one store in the group "norte" and three
// customers (ana, bia, caio) for the audiences' tests.
type audienceShop struct {
	a        *app.App
	ctx      context.Context
	tenantID string
	cpfs     []string
	ids      []string
}

func newAudienceShop(t *testing.T, db *storage.DB) *audienceShop {
	t.Helper()
	env := apptest.New(t, db, apptest.WithTenant("Audiências"), apptest.WithStore("LOJA-01", "Loja Centro", "norte"))
	a := env.App
	s := &audienceShop{a: a, ctx: env.Ctx, tenantID: env.TenantID}
	for i, name := range []string{"Ana", "Bia", "Caio"} {
		cpf := document.CPFOf(200000001 + i)
		c, err := a.Customers.CreateCustomer(s.ctx, customers.CustomerInput{Name: opt.Of(name), CPF: opt.Of(cpf), Email: opt.Of(strings.ToLower(name) + "@x.example")})
		require.NoError(t, err)
		s.cpfs, s.ids = append(s.cpfs, cpf), append(s.ids, c.ID)
	}
	return s
}

// sell registers a sale of customer i of R$ amount and processes it (the
// sale's job).
func (s *audienceShop) sell(t *testing.T, i int, receipt, amount string) {
	t.Helper()
	price, one, soldAt := decimal.RequireFromString(amount), decimal.NewFromInt(1), time.Now().Add(-time.Minute)
	sale, err := s.a.POS.RegisterSale(s.ctx, pos.SaleInput{
		Protocol: "PARTNER_V1", Customer: &pos.POSCustomer{ID: s.cpfs[i], Type: "CPF"}, SaleID: receipt,
		StoreID: "LOJA-01", PosID: "PDV-1", Channel: "STORE", Date: &soldAt, Amount: &price, AmountPayable: &price,
		Items:    []pos.SaleItemInput{{ID: "1", GTIN: "7891000100103", Description: "Café", UnitPrice: &price, Quantity: &one}},
		Payments: []pos.SalePaymentInput{{ID: "1", Amount: &price, Method: "PIX"}},
	})
	require.NoError(t, err)
	require.NoError(t, s.a.POS.ProcessSale(viewer.SystemContext(context.Background()), jobs.ProcessSale{TenantID: s.tenantID, SaleID: sale.ID}))
}

// members are the ids of seg's members, as validate and authorize read them.
func (s *audienceShop) members(t *testing.T, seg *ent.Segment) []string {
	t.Helper()
	got, err := seg.QueryCustomers().IDs(s.ctx)
	require.NoError(t, err)
	return got
}

// TestAudienceRuleRefused: a rule naming an unknown fact or mixing types is
// refused when saved, naming the fact and its line:column, and nothing is
// saved.
func TestAudienceRuleRefused(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		s := newAudienceShop(t, db)
		for _, tc := range []struct{ rule, want string }{
			{`levl == "gold"`, `1:1: undeclared reference to 'levl'`},
			{"purchases > 2 &&\n city > 3", `2:7: found no matching overload for '_>_' applied to '(string, int)'`},
			{`points`, `must be a bool, is int`},
		} {
			_, err := s.a.Customers.CreateSegment(s.ctx, customers.SegmentInput{Name: opt.Of("Errada").Ptr(), Rule: &tc.rule})
			var e *apperr.Error
			require.True(t, errors.As(err, &e), "%q: %v", tc.rule, err)
			assert.Equal(t, apperr.KindInvalid, e.Kind)
			assert.Equal(t, "rule", e.Field)
			assert.Contains(t, e.Message, tc.want)
			_, err = s.a.Audiences.PreviewAudience(s.ctx, tc.rule)
			require.True(t, errors.As(err, &e), "preview %q: %v", tc.rule, err)
			assert.Contains(t, e.Message, tc.want)
		}
		n, err := s.a.DB.Ent.Segment.Query().Count(s.ctx)
		require.NoError(t, err)
		assert.Zero(t, n, "nothing saved")
	})
}

// TestAudienceKeptTrue: an audience's members are current when the job that
// processed a sale commits, when a profile changes, when its rule changes,
// and after the periodic full recompute; its members are not edited by hand;
// the preview counts without saving and shows only masked documents.
func TestAudienceKeptTrue(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		s := newAudienceShop(t, db)
		ana, bia, caio := s.ids[0], s.ids[1], s.ids[2]
		vip, err := s.a.Customers.CreateSegment(s.ctx, customers.SegmentInput{Name: opt.Of("VIP").Ptr()})
		require.NoError(t, err)
		_, err = s.a.Customers.AddSegmentCustomers(s.ctx, vip.ID, []string{caio})
		require.NoError(t, err)

		p, err := s.a.Audiences.PreviewAudience(s.ctx, `level == "bronze" && purchases == 0`)
		require.NoError(t, err)
		assert.Equal(t, 3, p.Count)
		require.Len(t, p.Sample, 3)
		for i, m := range p.Sample {
			assert.Contains(t, s.ids, m.ID)
			assert.NotContains(t, m.MaskedDocument, s.cpfs[i][:9], "masked")
			assert.Contains(t, m.MaskedDocument, "*")
		}

		rule := `"norte" in group_purchases && group_purchases["norte"] >= 1 && lifetime_value >= 50`
		buyers, err := s.a.Customers.CreateSegment(s.ctx, customers.SegmentInput{Name: opt.Of("Compradores do norte").Ptr(), Rule: &rule})
		require.NoError(t, err)
		assert.Empty(t, s.members(t, buyers))
		s.sell(t, 0, "1", "80.00")
		assert.Equal(t, []string{ana}, s.members(t, buyers), "current once the sale's job commits")
		s.sell(t, 1, "2", "20.00")
		assert.Equal(t, []string{ana}, s.members(t, buyers), "R$ 20 is below the rule's threshold")

		recife := `city == "Recife" || "` + vip.ID + `" in segments`
		local, err := s.a.Customers.CreateSegment(s.ctx, customers.SegmentInput{Name: opt.Of("Recife ou VIP").Ptr(), Rule: &recife})
		require.NoError(t, err)
		assert.Equal(t, []string{caio}, s.members(t, local), "a static segment's members, read when created")
		_, err = s.a.Customers.PatchCustomer(s.ctx, bia, customers.CustomerInput{Address: opt.Of(customers.AddressInput{City: opt.Of("Recife"), State: opt.Of("PE")})})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{bia, caio}, s.members(t, local), "current once the profile's change commits")

		seen, err := s.a.Customers.Customer(s.ctx, bia)
		require.NoError(t, err)
		segs, err := seen.QuerySegments().IDs(s.ctx)
		require.NoError(t, err)
		assert.Equal(t, []string{local.ID}, segs, "customer.segments lists the audience")

		_, err = s.a.Customers.AddSegmentCustomers(s.ctx, local.ID, []string{ana})
		var e *apperr.Error
		require.True(t, errors.As(err, &e), "%v", err)
		assert.Equal(t, apperr.KindConflict, e.Kind)

		everyone := `purchases >= 1`
		buyers, err = s.a.Customers.UpdateSegment(s.ctx, buyers.ID, customers.SegmentInput{Rule: &everyone})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{ana, bia}, s.members(t, buyers), "a new rule's members at once")
		_, err = s.a.Customers.UpdateSegment(s.ctx, vip.ID, customers.SegmentInput{Rule: &everyone})
		require.Error(t, err, "a static segment takes no rule")

		// What no change saw (here: rows lost) the full recompute puts back.
		_, err = db.SQL.ExecContext(context.Background(), `DELETE FROM customer_segments WHERE segment_id = $1`, buyers.ID)
		require.NoError(t, err)
		_, err = db.SQL.ExecContext(context.Background(), `INSERT INTO customer_segments (customer_id, segment_id) VALUES ($1, $2)`, caio, buyers.ID)
		require.NoError(t, err)
		require.NoError(t, s.a.Audiences.RecomputeAudiences(viewer.SystemContext(context.Background()), jobs.RecomputeAudiences{}))
		assert.ElementsMatch(t, []string{ana, bia}, s.members(t, buyers))
		assert.ElementsMatch(t, []string{bia, caio}, s.members(t, local))
		assert.Equal(t, []string{caio}, s.members(t, vip), "a static segment is left alone")
	})
}

// TestAudiencePurchasesKeptBySales: the purchases by customer and store the
// audiences read (rollup_customer_stores, kept by the database's triggers)
// are, after every kind of change to sales, what counting the processed
// sales says; and a preview reads them.
func TestAudiencePurchasesKeptBySales(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		s := newAudienceShop(t, db)
		sys := viewer.SystemContext(context.Background())
		sul, err := s.a.Backoffice.CreateStore(sys, s.tenantID, "LOJA-02", "Loja Sul", "sul")
		require.NoError(t, err)
		norte, err := db.Ent.Store.Query().Where(store.Code("LOJA-01")).Only(s.ctx)
		require.NoError(t, err)
		ana, bia := s.ids[0], s.ids[1]
		now := time.Now().UTC().Truncate(time.Second)
		day := func(n int) time.Time { return now.AddDate(0, 0, -n) }
		sell := func(id, store string, cust any, status string, soldAt time.Time) (string, []any) {
			return `INSERT INTO sales (id, created_at, external_id, sold_at, amount, amount_payable, discount_amount, status, tenant_id, store_id, customer_id)
				VALUES ($1, $2, $1, $3, 10, 10, 0, $4, $5, $6, $7)`, []any{id, now, soldAt, status, s.tenantID, store, cust}
		}
		const kept = `SELECT customer_id, store_id, purchases, last_sold_at FROM rollup_customer_stores WHERE tenant_id = $1`
		const counted = `SELECT customer_id, store_id, count(*), max(sold_at) FROM sales WHERE tenant_id = $1
			AND customer_id IS NOT NULL AND status IN ('PROCESSED', 'PARTIALLY_RETURNED') GROUP BY customer_id, store_id`
		for _, step := range []struct {
			name string
			sql  func() (string, []any)
			rows int // of rollup_customer_stores after the step
		}{
			{"processed", func() (string, []any) { return sell("s1", norte.ID, ana, "PROCESSED", day(10)) }, 1},
			{"a second, later", func() (string, []any) { return sell("s2", norte.ID, ana, "PROCESSED", day(2)) }, 1},
			{"a third, earlier", func() (string, []any) { return sell("s3", norte.ID, ana, "PROCESSED", day(30)) }, 1},
			{"received: no purchase yet", func() (string, []any) { return sell("s4", sul.ID, bia, "RECEIVED", day(1)) }, 1},
			{"without a customer", func() (string, []any) { return sell("s5", sul.ID, nil, "PROCESSED", day(1)) }, 1},
			{"processed later", func() (string, []any) { return `UPDATE sales SET status = 'PROCESSED' WHERE id = 's4'`, nil }, 2},
			{"the latest returned whole", func() (string, []any) { return `UPDATE sales SET status = 'RETURNED' WHERE id = 's2'`, nil }, 2},
			{"returned in part", func() (string, []any) {
				return `UPDATE sales SET status = 'PARTIALLY_RETURNED', returned_amount = '5' WHERE id = 's1'`, nil
			}, 2},
			{"moved to another customer", func() (string, []any) { return `UPDATE sales SET customer_id = $1 WHERE id = 's3'`, []any{bia} }, 3},
			{"sold at another time", func() (string, []any) { return `UPDATE sales SET sold_at = $1 WHERE id = 's3'`, []any{day(3)} }, 3},
			{"the customer left", func() (string, []any) { return `UPDATE sales SET customer_id = NULL WHERE id = 's4'`, nil }, 2},
			{"cancelled", func() (string, []any) { return `UPDATE sales SET status = 'CANCELLED' WHERE id = 's3'`, nil }, 1},
			{"deleted", func() (string, []any) { return `DELETE FROM sales WHERE id = 's1'`, nil }, 0},
			{"again", func() (string, []any) { return sell("s6", norte.ID, ana, "PROCESSED", day(7)) }, 1},
		} {
			q, args := step.sql()
			_, err := db.SQL.ExecContext(sys, q, args...)
			require.NoError(t, err, step.name)
			var rows, differ int
			require.NoError(t, db.SQL.QueryRowContext(sys, `SELECT count(*) FROM rollup_customer_stores WHERE tenant_id = $1`, s.tenantID).Scan(&rows))
			require.NoError(t, db.SQL.QueryRowContext(sys, `SELECT (SELECT count(*) FROM (`+kept+` EXCEPT `+counted+`) a) + (SELECT count(*) FROM (`+
				counted+` EXCEPT `+kept+`) b)`, s.tenantID).Scan(&differ))
			assert.Equal(t, step.rows, rows, step.name)
			assert.Zero(t, differ, step.name)
		}

		for rule, want := range map[string]int{
			`purchases == 1 && days_since_last_purchase == 7`:                          1,
			`group_purchases["norte"] == 1 && store_most_visited == "LOJA-01"`:         1,
			`"sul" in group_purchases || days_since_last_purchase != -1 && points > 0`: 0,
			`purchases == 0`: 2,
		} {
			p, err := s.a.Audiences.PreviewAudience(s.ctx, rule)
			require.NoError(t, err, rule)
			assert.Equal(t, want, p.Count, rule)
		}
	})
}
