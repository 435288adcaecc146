package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/schema/sealed"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/worker"
)

// posJob is a row of river_job: its id and its arguments.
type posJob[A any] struct {
	id   int64
	args A
}

// posJobRows are the jobs of a kind, oldest first.
func posJobRows[A river.JobArgs](t testing.TB, e *posEnv) []posJob[A] {
	t.Helper()
	var kind A
	rows, err := e.db.SQL.Query(`SELECT id, args FROM river_job WHERE kind = '` + kind.Kind() + `' ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	var out []posJob[A]
	for rows.Next() {
		var j posJob[A]
		var args []byte
		require.NoError(t, rows.Scan(&j.id, &args))
		require.NoError(t, json.Unmarshal(args, &j.args))
		out = append(out, j)
	}
	require.NoError(t, rows.Err())
	return out
}

func posJobs(t testing.TB, e *posEnv) []posJob[jobs.ProcessSale] {
	t.Helper()
	return posJobRows[jobs.ProcessSale](t, e)
}

// posWork runs the process_sale job of a sale as River would hand it over,
// in a worker process of its own.
func posWork(t testing.TB, e *posEnv, saleID string) {
	t.Helper()
	posWorkIn(t, e, app.New(&app.Config{DB: e.db, Clock: time.Now}), saleID)
}

// posWorkIn is posWork in the process of a.
func posWorkIn(t testing.TB, e *posEnv, a *app.App, saleID string) {
	t.Helper()
	for _, j := range posJobs(t, e) {
		if j.args.SaleID != saleID {
			continue
		}
		w := worker.For[jobs.ProcessSale](a)
		err := w.Work(context.Background(), &river.Job[jobs.ProcessSale]{
			JobRow: &rivertype.JobRow{ID: j.id, Kind: jobs.ProcessSale{}.Kind(), Attempt: 1, MaxAttempts: 25},
			Args:   j.args,
		})
		require.NoError(t, err)
		return
	}
	t.Fatalf("no process_sale job for %s", saleID)
}

// posSaleID is the id (sal_…) of the sale a store registered.
func (e *posEnv) posSaleID(t testing.TB, receipt string) string {
	t.Helper()
	s, err := e.db.Ent.Sale.Query().Where(sale.ExternalID(receipt)).Only(posSys())
	require.NoError(t, err)
	return s.ID
}

func TestPOSSaleProcessing(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		doc := posCPF()
		cust := e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		camp := e.posPercent(t, "Dez por cento", "10", []string{"pdv"})
		// A campaign of another tenant over the same database.
		other := posSetup(t, db)
		foreign := other.posPercent(t, "Campanha de outra rede", "5", []string{"pdv"})

		// R$ 100.00 of items less R$ 10.00 of campaign discount, R$ 2.00
		// external, R$ 0.30 of another tenant's campaign and R$ 0.21 of a
		// promotion that is no campaign at all: R$ 87.49 payable, 87 points.
		body := posDiscounted(posSaleBody(posN("555"), map[string]any{"id": doc, "type": "CPF"}), camp)
		posSet(body, "sale.items.1.discounts", []any{posExternal("2.00", "10.50", "1"),
			map[string]any{"promotionId": foreign, "unitDiscount": posN("0.30"), "quantity": posN("1")},
			map[string]any{"promotionId": "cmp_inexistente", "unitDiscount": posN("0.21"), "quantity": posN("1")}})
		posSet(body, "sale.discountAmount", posN("12.51"))
		posSet(body, "sale.amountPayable", posN("87.49"))
		posSet(body, "sale.payments.0.amount", posN("87.49"))
		posRequireAccepted(t, e.posPost(t, "/sales", body), "555", map[string]any{"id": doc, "type": "CPF"})
		saleID := e.posSaleID(t, "555")

		r := e.posGet(t, "/sales/555")
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		got := r.obj(t)["sale"].(map[string]any)
		require.Equal(t, []string{"amountPayable", "id", "pointsCredited", "pointsReversed", "receivedAt", "returnedAmount", "returns", "saleId", "status", "store"}, sortedKeys(got))
		require.Equal(t, "RECEIVED", got["status"])
		require.Equal(t, "555", got["id"])
		require.Equal(t, saleID, got["saleId"])
		require.Equal(t, posN("0"), got["pointsCredited"])
		require.Equal(t, map[string]any{"id": posStore}, got["store"])
		require.Equal(t, "87.49", string(got["amountPayable"].(json.Number)))

		posWork(t, e, saleID)
		check := func(t *testing.T) {
			t.Helper()
			for _, ref := range []string{"555", saleID, "555?storeId=" + posStore} {
				r := e.posGet(t, "/sales/"+ref)
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
				got := r.obj(t)["sale"].(map[string]any)
				require.Equal(t, "PROCESSED", got["status"], "%s", r.body)
				require.Equal(t, posN("87"), got["pointsCredited"])
				require.Contains(t, got, "processedAt")
				require.NotContains(t, got, "reason")
			}
			entries, err := e.db.Ent.PointsEntry.Query().Where(pointsentry.CustomerID(cust.ID)).All(posSys())
			require.NoError(t, err)
			require.Len(t, entries, 1, "the ledger is credited once")
			require.Equal(t, int64(87), entries[0].Points)
			require.Equal(t, pointsentry.SourceKindSale, entries[0].SourceKind)
			require.Equal(t, saleID, *entries[0].SourceID)
			c, err := e.db.Ent.Customer.Get(posSys(), cust.ID)
			require.NoError(t, err)
			require.Equal(t, int64(87), c.PointsBalance)
			require.Equal(t, "87.49", c.LifetimeValue.String(), "lifetime value")
			reds, err := e.db.Ent.Redemption.Query().Where(redemption.CustomerID(cust.ID)).All(posSys())
			require.NoError(t, err)
			require.Len(t, reds, 1, "one redemption: the campaign of the tenant; not the external discount, another tenant's campaign or an unknown promotion")
			fc, err := other.db.Ent.Campaign.Get(posSys(), foreign)
			require.NoError(t, err)
			require.Zero(t, fc.RedemptionsCount)
			require.Equal(t, camp, reds[0].CampaignID)
			require.Equal(t, "555", reds[0].OrderID)
			require.Equal(t, saleID, *reds[0].SaleID)
			require.True(t, reds[0].DiscountAmount.Equal(decimal.NewFromInt(10)), reds[0].DiscountAmount.String())
			cp, err := e.db.Ent.Campaign.Get(posSys(), camp)
			require.NoError(t, err)
			require.Equal(t, 1, cp.RedemptionsCount)
			evs, err := e.db.Ent.Event.Query().Where(event.Type("sale.processed"), event.SubjectID(saleID)).All(posSys())
			require.NoError(t, err)
			require.Len(t, evs, 1, "sale.processed")
			require.Equal(t, cust.ID, evs[0].Data["customer_id"])
			require.EqualValues(t, 87, evs[0].Data["points_credited"])
			s, err := e.db.Ent.Sale.Get(posSys(), saleID)
			require.NoError(t, err)
			require.Equal(t, cust.ID, *s.CustomerID)
		}
		check(t)

		t.Run("a second run and a resend change nothing", func(t *testing.T) {
			posWork(t, e, saleID)
			queued := len(posJobs(t, e))
			posRequireAccepted(t, e.posPost(t, "/sales", body), "555", map[string]any{"id": doc, "type": "CPF"})
			require.Len(t, posJobs(t, e), queued)
			check(t)
		})

		t.Run("a sale under R$ 1 earns no points but counts as spent", func(t *testing.T) {
			small := posSaleBody(posN("556"), map[string]any{"id": doc, "type": "CPF"})
			posSet(small, "sale.items", []any{map[string]any{"id": "1", "gtin": posGTINA, "description": "Bala",
				"unitPrice": posN("0.50"), "quantity": posN("1")}})
			for _, f := range []string{"sale.amount", "sale.amountPayable", "sale.payments.0.amount"} {
				posSet(small, f, posN("0.50"))
			}
			posRequireAccepted(t, e.posPost(t, "/sales", small), "556", map[string]any{"id": doc, "type": "CPF"})
			id := e.posSaleID(t, "556")
			posWork(t, e, id)
			r := e.posGet(t, "/sales/556")
			got := r.obj(t)["sale"].(map[string]any)
			require.Equal(t, "PROCESSED", got["status"], "%s", r.body)
			require.Equal(t, posN("0"), got["pointsCredited"])
			c, err := e.db.Ent.Customer.Get(posSys(), cust.ID)
			require.NoError(t, err)
			require.Equal(t, "87.99", c.LifetimeValue.String(), "87.49 + 0.50")
			require.Equal(t, int64(87), c.PointsBalance)
			require.Equal(t, 1, e.db.Ent.Event.Query().Where(event.Type("sale.processed"), event.SubjectID(id)).CountX(posSys()))
		})

		t.Run("unidentified customer", func(t *testing.T) {
			posRequireAccepted(t, e.posPost(t, "/sales", posSaleBody(posN("557"), nil)), "557", map[string]any{"id": posDefault, "type": nil})
			id := e.posSaleID(t, "557")
			posWork(t, e, id)
			got := e.posGet(t, "/sales/557").obj(t)["sale"].(map[string]any)
			require.Equal(t, "PROCESSED", got["status"])
			require.Equal(t, posN("0"), got["pointsCredited"])
			s, err := e.db.Ent.Sale.Get(posSys(), id)
			require.NoError(t, err)
			require.Nil(t, s.CustomerID)
			require.Equal(t, 1, e.db.Ent.Event.Query().Where(event.Type("sale.processed"), event.SubjectID(id)).CountX(posSys()))
		})

		t.Run("an unknown customer is pre-registered when the tenant enables it", func(t *testing.T) {
			e.posSettings(t, backoffice.TenantSettings{PreRegistration: posBool(true)})
			defer e.posSettings(t, backoffice.TenantSettings{PreRegistration: posBool(false)})
			fresh := posCPF()
			posRequireAccepted(t, e.posPost(t, "/sales", posSaleBody(posN("558"), map[string]any{"id": fresh, "type": "CPF"})), "558",
				map[string]any{"id": fresh, "type": "CPF"})
			posWork(t, e, e.posSaleID(t, "558"))
			c, err := e.db.Ent.Customer.Query().Where(customer.DocumentIndex(sealed.MustIndex(fresh))).Only(posSys())
			require.NoError(t, err)
			require.Equal(t, int64(100), c.PointsBalance)
			r := e.posPost(t, "/customers/identify", posIdentifyBody("s", fresh, "CPF"))
			require.Equal(t, "PRE_REGISTER", r.obj(t)["customer"].(map[string]any)["status"])
		})

		t.Run("bonus points, level and lifetime value", func(t *testing.T) {
			e.posCampaign(t, campaigns.CampaignInput{Name: "Pontos em triplo", Type: "bonus_points", Channels: []string{"pdv"},
				Discount: &campaigns.DiscountInput{Multiplier: posDecPtr("3")}})
			e.posCampaign(t, campaigns.CampaignInput{Name: "Pontos só no app", Type: "bonus_points", Channels: []string{"app"},
				Discount: &campaigns.DiscountInput{Multiplier: posDecPtr("10")}})
			big := posSaleBody(posN("560"), map[string]any{"id": doc, "type": "CPF"})
			posSet(big, "sale.items", []any{map[string]any{"id": "1", "gtin": posGTINC, "description": "TV",
				"unitPrice": posN("400.00"), "quantity": posN("1")}})
			for _, f := range []string{"sale.amount", "sale.amountPayable", "sale.payments.0.amount"} {
				posSet(big, f, posN("400.00"))
			}
			// Bonus campaigns are those active when the sale was made.
			posSet(big, "sale.date", time.Now().Format(time.RFC3339))
			before, err := e.db.Ent.Customer.Get(posSys(), cust.ID)
			require.NoError(t, err)
			require.Equal(t, customer.LevelBronze, before.Level)
			posRequireAccepted(t, e.posPost(t, "/sales", big), "560", map[string]any{"id": doc, "type": "CPF"})
			id := e.posSaleID(t, "560")
			posWork(t, e, id)
			got := e.posGet(t, "/sales/560").obj(t)["sale"].(map[string]any)
			require.Equal(t, "PROCESSED", got["status"])
			require.Equal(t, posN("1200"), got["pointsCredited"], "400 points and a bonus of (3 − 1) × 400; the app campaign does not apply")
			entries, err := e.db.Ent.PointsEntry.Query().Where(pointsentry.SourceID(id)).All(posSys())
			require.NoError(t, err)
			require.Len(t, entries, 2)
			kinds := []pointsentry.Kind{entries[0].Kind, entries[1].Kind}
			require.ElementsMatch(t, []pointsentry.Kind{pointsentry.KindCredit, pointsentry.KindBonus}, kinds)
			after, err := e.db.Ent.Customer.Get(posSys(), cust.ID)
			require.NoError(t, err)
			require.Equal(t, before.PointsBalance+1200, after.PointsBalance)
			require.Equal(t, before.LifetimeValue.Add(decimal.NewFromInt(400)).String(), after.LifetimeValue.String())
			require.Equal(t, customer.LevelSilver, after.Level, "over 1,000 points in 12 months")
			require.Equal(t, 1, e.db.Ent.Event.Query().Where(event.Type("customer.level_changed"), event.SubjectID(cust.ID)).CountX(posSys()))
			r := e.posPost(t, "/customers/identify", posIdentifyBody("s", doc, "CPF"))
			require.Equal(t, map[string]any{"code": posN("2"), "description": "silver"}, r.obj(t)["customer"].(map[string]any)["classification"])
			posWork(t, e, id)
			again, err := e.db.Ent.Customer.Get(posSys(), cust.ID)
			require.NoError(t, err)
			require.Equal(t, after.PointsBalance, again.PointsBalance, "a second run credits nothing")
		})

		t.Run("unknown sales", func(t *testing.T) {
			for _, ref := range []string{"999999", "sal_nope", "abc", "%00", "%FF%FE", "sal_%00", "555?storeId=%00", "555?storeId=%FF", "555?storeId=" + posStore2} {
				posRequireProblem(t, e.posGet(t, "/sales/"+ref), http.StatusNotFound, "resource-not-found")
			}
			// Another tenant's sale, by receipt or by id.
			posRequireAccepted(t, other.posPost(t, "/sales", posSaleBody(posN("559"), nil)), "559", map[string]any{"id": posDefault, "type": nil})
			otherID := other.posSaleID(t, "559")
			for _, ref := range []string{"559", otherID} {
				posRequireProblem(t, e.posGet(t, "/sales/"+ref), http.StatusNotFound, "resource-not-found")
			}
			r := other.posGet(t, "/sales/"+otherID)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		})
	})
}

// TestPOSSaleProcessedByRiver registers a sale with a working River client
// and waits for the outcome over HTTP.
func TestPOSSaleProcessedByRiver(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		e.startWorkers(t, worker.Config{Work: true})
		doc := posCPF()
		cust := e.posCustomer(t, doc, posCust{name: "Rio"})
		posRequireAccepted(t, e.posPost(t, "/sales", posSaleBody(posN("31337"), map[string]any{"id": doc, "type": "CPF"})),
			"31337", map[string]any{"id": doc, "type": "CPF"})
		var got map[string]any
		require.Eventually(t, func() bool {
			got = e.posGet(t, "/sales/31337").obj(t)["sale"].(map[string]any)
			return got["status"] != "RECEIVED"
		}, 30*time.Second, 50*time.Millisecond)
		require.Equal(t, "PROCESSED", got["status"], "%v", got)
		require.Equal(t, posN("100"), got["pointsCredited"])
		c, err := e.db.Ent.Customer.Get(posSys(), cust.ID)
		require.NoError(t, err)
		require.Equal(t, int64(100), c.PointsBalance)
	})
}
