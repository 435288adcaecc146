package app

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/churn"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/churnmodel"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/customerscore"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/ent/tenant"
	"github.com/fideliza/fideliza/storage"
)

// The churn scores' settings: risk from p_alive (low from churnLowRisk up,
// medium from churnMediumRisk), the horizon of expected purchases, the
// fewest customers with purchases a model is fitted to, and the customers
// scored per transaction.
const (
	churnLowRisk      = 0.7
	churnMediumRisk   = 0.4
	churnHorizonDays  = 90
	minChurnCustomers = 20
	churnScoreBatch   = 500
	// highValueQuantile is where "high value" starts among the average
	// purchase values of the customers who bought.
	highValueQuantile = 0.75
)

const day = 24 * time.Hour

// weeks is the model's time unit.
func weeks(d time.Duration) float64 { return d.Hours() / 24 / 7 }

// purchaseRecord is what a customer bought up to a moment: the days with a
// purchase (UTC), and their value.
type purchaseRecord struct {
	days  map[time.Time]bool
	value decimal.Decimal
}

// average is the value of a purchase day, on average.
func (p *purchaseRecord) average() decimal.Decimal {
	return p.value.DivRound(decimal.NewFromInt(int64(len(p.days))), 2)
}

// history is the record as the model reads it, at asOf.
func (p *purchaseRecord) history(asOf time.Time) (churn.History, time.Time) {
	ds := make([]time.Time, 0, len(p.days))
	for d := range p.days {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].Before(ds[j]) })
	first, last := ds[0], ds[len(ds)-1]
	return churn.History{X: len(ds) - 1, Tx: weeks(last.Sub(first)), T: weeks(asOf.Sub(first))}, last
}

// purchaseRecords reads the purchases of the given customers of the
// viewer's tenant up to asOf: their processed POS sales (less what came
// back; a sale returned or cancelled whole is no purchase) and the orders
// credited through the API. Several purchases on one day are one
// transaction, as in the model's paper.
func (a *App) purchaseRecords(ctx context.Context, asOf time.Time, customerIDs []string) (map[string]*purchaseRecord, error) {
	out := map[string]*purchaseRecord{}
	add := func(id string, at time.Time, value decimal.Decimal) {
		r := out[id]
		if r == nil {
			r = &purchaseRecord{days: map[time.Time]bool{}}
			out[id] = r
		}
		r.days[at.UTC().Truncate(day)] = true
		r.value = r.value.Add(value)
	}
	sales, err := a.DB.Ent.Sale.Query().Where(sale.CustomerIDIn(customerIDs...), sale.SoldAtLTE(asOf),
		sale.StatusIn(sale.StatusPROCESSED, sale.StatusPARTIALLY_RETURNED)).Select(sale.FieldCustomerID, sale.FieldSoldAt, sale.FieldAmountPayable, sale.FieldReturnedAmount).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range sales {
		add(*s.CustomerID, s.SoldAt, s.AmountPayable.Sub(s.ReturnedAmount))
	}
	orders, err := a.DB.Ent.PointsEntry.Query().Where(pointsentry.CustomerIDIn(customerIDs...), pointsentry.KindEQ(pointsentry.KindCredit),
		pointsentry.SourceKindEQ(pointsentry.SourceKindOrder), pointsentry.CreatedAtLTE(asOf)).Select(pointsentry.FieldCustomerID, pointsentry.FieldCreatedAt, pointsentry.FieldAmount).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, e := range orders {
		v := decimal.Zero
		if e.Amount != nil {
			v = *e.Amount
		}
		add(e.CustomerID, e.CreatedAt, v)
	}
	return out, nil
}

// errTooFewForChurn is a tenant with too few customers who bought to fit a
// model to.
var errTooFewForChurn = fmt.Errorf("fewer than %d customers with purchases: too few to fit the churn model", minChurnCustomers)

// eachCustomerBatch calls fn with the ids of the viewer's tenant's
// customers, churnScoreBatch at a time in id order, and their purchase
// records up to asOf: memory holds one batch, whatever the tenant's size.
func (a *App) eachCustomerBatch(ctx context.Context, asOf time.Time, fn func(ids []string, records map[string]*purchaseRecord) error) error {
	after := ""
	for {
		q := a.DB.Ent.Customer.Query().Order(ent.Asc(customer.FieldID)).Limit(churnScoreBatch)
		if after != "" {
			q.Where(customer.IDGT(after))
		}
		ids, err := q.IDs(ctx)
		if err != nil || len(ids) == 0 {
			return err
		}
		records, err := a.purchaseRecords(ctx, asOf, ids)
		if err != nil {
			return err
		}
		if err := fn(ids, records); err != nil {
			return err
		}
		after = ids[len(ids)-1]
	}
}

// FitChurnModel fits the BG/NBD model to the purchases of the viewer's
// tenant up to asOf and stores it, with the tenant's high-value threshold:
// the model customers are scored with until the next fit.
func (a *App) FitChurnModel(ctx context.Context, asOf time.Time) (*ent.ChurnModel, error) {
	asOf = asOf.UTC().Truncate(time.Microsecond)
	var hs []churn.History
	var values []decimal.Decimal
	err := a.eachCustomerBatch(ctx, asOf, func(_ []string, records map[string]*purchaseRecord) error {
		for _, r := range records {
			h, _ := r.history(asOf)
			hs = append(hs, h)
			values = append(values, r.average())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(hs) < minChurnCustomers {
		return nil, errTooFewForChurn
	}
	p, ll, err := churn.Fit(hs)
	if err != nil {
		return nil, err
	}
	sort.Slice(values, func(i, j int) bool { return values[i].LessThan(values[j]) })
	v, _ := viewer.FromContext(ctx)
	return a.DB.Ent.ChurnModel.Create().SetTenantID(v.TenantID).SetFittedAt(asOf).SetCustomers(len(hs)).
		SetR(p.R).SetAlpha(p.Alpha).SetA(p.A).SetB(p.B).SetLogLikelihood(ll).
		SetHighValueThreshold(values[int(float64(len(values)-1)*highValueQuantile)]).Save(ctx)
}

// latestChurnModel is the tenant's newest model; nil when none was fitted.
func (a *App) latestChurnModel(ctx context.Context) (*ent.ChurnModel, error) {
	m, err := a.DB.Ent.ChurnModel.Query().Order(ent.Desc(churnmodel.FieldFittedAt), ent.Desc(churnmodel.FieldID)).First(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return m, err
}

// ChurnScore is a customer's score as computed now.
type ChurnScore struct {
	CustomerID           string
	Risk                 customerscore.Risk
	Reason               string // why the risk is unknown
	PAlive               *float64
	ExpectedPurchases90d *float64
	Frequency            int
	RecencyDays          *int
	MonetaryValue        decimal.Decimal
	HighValue            bool // MonetaryValue reaches the model's high-value threshold
	ModelFittedAt        *time.Time
}

// score computes a customer's score under model m (nil: none fitted) at
// asOf from its purchase record (nil: none).
func score(customerID string, m *ent.ChurnModel, r *purchaseRecord, asOf time.Time) ChurnScore {
	s := ChurnScore{CustomerID: customerID, Risk: customerscore.RiskUnknown}
	if m != nil {
		at := m.FittedAt
		s.ModelFittedAt = &at
	}
	if r == nil {
		s.Reason = "no purchase yet"
		return s
	}
	h, last := r.history(asOf)
	recency := int(asOf.Sub(last) / day)
	s.Frequency, s.RecencyDays = h.X, &recency
	s.MonetaryValue = r.average()
	if m == nil {
		s.Reason = "the tenant's churn model is not fitted yet: it needs purchases of at least " +
			fmt.Sprint(minChurnCustomers) + " customers"
		return s
	}
	s.HighValue = !s.MonetaryValue.LessThan(m.HighValueThreshold)
	p := churn.Params{R: m.R, Alpha: m.Alpha, A: m.A, B: m.B}
	alive := p.PAlive(h)
	expected := p.ExpectedPurchases(h, weeks(churnHorizonDays*day))
	s.PAlive, s.ExpectedPurchases90d = &alive, &expected
	switch {
	case alive >= churnLowRisk:
		s.Risk = customerscore.RiskLow
	case alive >= churnMediumRisk:
		s.Risk = customerscore.RiskMedium
	default:
		s.Risk = customerscore.RiskHigh
	}
	return s
}

// CustomerChurn scores one customer of the viewer's tenant now, under the
// tenant's newest model.
func (a *App) CustomerChurn(ctx context.Context, customerID string) (*ChurnScore, error) {
	if err := guarded("id", customerID); err != nil {
		return nil, err
	}
	exists, err := a.DB.Ent.Customer.Query().Where(customer.ID(customerID)).Exist(ctx)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, apperr.NotFound("customer")
	}
	m, err := a.latestChurnModel(ctx)
	if err != nil {
		return nil, err
	}
	now := a.Now().UTC()
	records, err := a.purchaseRecords(ctx, now, []string{customerID})
	if err != nil {
		return nil, err
	}
	s := score(customerID, m, records[customerID], now)
	return &s, nil
}

// ScoreAllTenants scores the customers of every active tenant, each as
// ScoreCustomers does; a tenant that fails does not stop the others.
func (a *App) ScoreAllTenants(ctx context.Context) error {
	tenants, err := a.DB.Ent.Tenant.Query().Where(tenant.Active(true)).IDs(viewer.SystemContext(ctx))
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range tenants {
		if _, err := a.ScoreCustomers(viewer.TenantContext(ctx, id), a.Now()); err != nil {
			errs = append(errs, fmt.Errorf("scoring tenant %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// ScoreCustomers fits the model of the viewer's tenant at asOf and scores
// every customer with it, churnScoreBatch customers per transaction. A
// tenant too small to fit keeps its last model (or none) and is scored with
// it.
func (a *App) ScoreCustomers(ctx context.Context, asOf time.Time) (int, error) {
	asOf = asOf.UTC().Truncate(time.Microsecond)
	if _, err := a.FitChurnModel(ctx, asOf); err != nil && !errors.Is(err, errTooFewForChurn) && !errors.Is(err, churn.ErrNoFit) {
		return 0, err
	}
	m, err := a.latestChurnModel(ctx)
	if err != nil {
		return 0, err
	}
	scored := 0
	err = a.eachCustomerBatch(ctx, asOf, func(ids []string, records map[string]*purchaseRecord) error {
		err := a.DB.InTx(ctx, func(tx storage.Tx) error {
			if _, err := tx.Ent.CustomerScore.Delete().Where(customerscore.CustomerIDIn(ids...)).Exec(ctx); err != nil {
				return err
			}
			creates := make([]*ent.CustomerScoreCreate, len(ids))
			for i, id := range ids {
				s := score(id, m, records[id], asOf)
				creates[i] = tx.Ent.CustomerScore.Create().SetCustomerID(id).SetScoredAt(asOf).SetRisk(s.Risk).
					SetReason(s.Reason).SetNillablePAlive(s.PAlive).SetNillableExpectedPurchases90d(s.ExpectedPurchases90d).
					SetFrequency(s.Frequency).SetNillableRecencyDays(s.RecencyDays).SetMonetaryValue(s.MonetaryValue).SetHighValue(s.HighValue).
					SetNillableModelFittedAt(s.ModelFittedAt)
			}
			return tx.Ent.CustomerScore.CreateBulk(creates...).Exec(ctx)
		})
		scored += len(ids)
		return err
	})
	return scored, err
}
