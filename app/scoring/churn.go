package scoring

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/fideliza/fideliza/app/kernel"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/churn"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/churnmodel"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/customerscore"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/schema"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// The churn scores' settings: risk from p_alive (low from churnLowRisk up,
// medium from churnMediumRisk), the horizon of expected purchases, the
// fewest customers with purchases a model is fitted to, the customers
// whose purchases are read per query and the queries at once, and those
// scored per transaction.
const (
	churnLowRisk      = 0.7
	churnMediumRisk   = 0.4
	churnHorizonDays  = 90
	minChurnCustomers = 20
	churnReadBatch    = 2000
	churnReaders      = 2
	churnWriteBatch   = 1000
	// highValueQuantile is where "high value" starts among the average
	// purchase values of the customers who bought.
	highValueQuantile = 0.75
)

const day = 24 * time.Hour

// weeks is the model's time unit.
func weeks(d time.Duration) float64 { return d.Hours() / 24 / 7 }

// purchases is what a customer bought up to a moment, as the model reads
// it: the number of days with a purchase, the first and the last (days
// since 1970-01-01 in the tenant's time zone), and their value in cents.
type purchases struct {
	customerID  string
	days        int32
	first, last int32
	cents       int64
}

// averageCents is the value of a purchase day, on average, in cents
// rounded half up.
func (p *purchases) averageCents() int64 {
	return (2*p.cents + int64(p.days)) / (2 * int64(p.days))
}

// average is the value of a purchase day, on average, in R$.
func (p *purchases) average() decimal.Decimal { return decimal.New(p.averageCents(), -2) }

// dayStart is the instant day (days since 1970-01-01) begins in loc.
func dayStart(day int32, loc *time.Location) time.Time {
	y, m, d := time.Unix(int64(day)*86400, 0).UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, loc)
}

// dayOf is the day of t in loc, counted from 1970-01-01.
func dayOf(t time.Time, loc *time.Location) int32 {
	y, m, d := t.In(loc).Date()
	return int32(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// history is the record as the model reads it, at asOf; last is when the
// last purchase day began.
func (p *purchases) history(asOf time.Time, loc *time.Location) (h churn.History, last time.Time) {
	first := dayStart(p.first, loc)
	last = dayStart(p.last, loc)
	return churn.History{X: int(p.days) - 1, Tx: weeks(last.Sub(first)), T: weeks(asOf.Sub(first))}, last
}

// purchaseRange reads the purchases up to asOf of the customers of the
// viewer's tenant whose ids are within (after, upTo], or of the one
// customer upTo when after is nil: their processed POS sales (less what came
// back; a sale returned or cancelled whole is no purchase) and the orders
// credited through the API. Several purchases on one local day are one
// transaction, as in the model's paper. Customers without a purchase are
// left out; the others come in id order.
func (a *Service) purchaseRange(ctx context.Context, loc *time.Location, asOf time.Time, after *string, upTo string) ([]purchases, error) {
	salesOf, ordersOf := sale.CustomerID(upTo), pointsentry.CustomerID(upTo)
	if after != nil {
		salesOf = sale.And(sale.CustomerIDGT(*after), sale.CustomerIDLTE(upTo))
		ordersOf = pointsentry.And(pointsentry.CustomerIDGT(*after), pointsentry.CustomerIDLTE(upTo))
	}
	type purchase struct {
		day   int32
		cents int64
	}
	byCustomer := map[string][]purchase{}
	sales, err := a.k.DB.Ent.Sale.Query().Where(salesOf, sale.SoldAtLTE(asOf),
		sale.StatusIn(sale.StatusPROCESSED, sale.StatusPARTIALLY_RETURNED)).
		Select(sale.FieldCustomerID, sale.FieldSoldAt, sale.FieldAmountPayable, sale.FieldReturnedAmount).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range sales {
		byCustomer[*s.CustomerID] = append(byCustomer[*s.CustomerID],
			purchase{dayOf(s.SoldAt, loc), s.AmountPayable.Sub(s.ReturnedAmount).Shift(2).IntPart()})
	}
	orders, err := a.k.DB.Ent.PointsEntry.Query().Where(ordersOf, pointsentry.KindEQ(pointsentry.KindCredit),
		pointsentry.SourceKindEQ(pointsentry.SourceKindOrder), pointsentry.CreatedAtLTE(asOf)).
		Select(pointsentry.FieldCustomerID, pointsentry.FieldCreatedAt, pointsentry.FieldAmount).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, e := range orders {
		var cents int64
		if e.Amount != nil {
			cents = e.Amount.Shift(2).IntPart()
		}
		byCustomer[e.CustomerID] = append(byCustomer[e.CustomerID], purchase{dayOf(e.CreatedAt, loc), cents})
	}
	out := make([]purchases, 0, len(byCustomer))
	for id, ps := range byCustomer {
		sort.Slice(ps, func(i, j int) bool { return ps[i].day < ps[j].day })
		p := purchases{customerID: id, first: ps[0].day, last: ps[len(ps)-1].day}
		for i, q := range ps {
			if i == 0 || q.day != ps[i-1].day {
				p.days++
			}
			p.cents += q.cents
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].customerID < out[j].customerID })
	return out, nil
}

// errTooFewForChurn is a tenant with too few customers who bought to fit a
// model to.
var errTooFewForChurn = fmt.Errorf("fewer than %d customers with purchases: too few to fit the churn model", minChurnCustomers)

// purchasePage is the purchases of a page of customers: their ids, and the
// purchases of those who bought, both in id order.
type purchasePage struct {
	ids    []string
	bought []purchases
	err    error
	read   chan struct{} // closed once bought or err is set
}

// eachPurchasePage hands fn the purchases up to asOf of every customer of
// the viewer's tenant, a page of churnReadBatch customers at a time in id
// order, while the next pages are read on churnReaders connections at once:
// fn (the writes of the scores) overlaps the reads.
func (a *Service) eachPurchasePage(ctx context.Context, loc *time.Location, asOf time.Time, fn func(*purchasePage) error) error {
	ctx, cancel := context.WithCancel(ctx)
	// The lister and the readers stop and are waited for, whatever fn did;
	// the lister, counted itself, starts readers only while counted.
	var running sync.WaitGroup
	defer func() { cancel(); running.Wait() }()
	pages := make(chan *purchasePage, churnReaders)
	listed := make(chan error, 1)
	running.Go(func() {
		defer close(pages)
		after := ""
		for {
			q := a.k.DB.Ent.Customer.Query().Where(customer.IDGT(after)).Order(ent.Asc(customer.FieldID)).Limit(churnReadBatch)
			ids, err := q.IDs(ctx)
			if err != nil || len(ids) == 0 {
				listed <- err
				return
			}
			p := &purchasePage{ids: ids, read: make(chan struct{})}
			from := after
			running.Go(func() {
				defer close(p.read)
				p.bought, p.err = a.purchaseRange(ctx, loc, asOf, &from, ids[len(ids)-1])
			})
			select {
			case pages <- p:
			case <-ctx.Done():
				listed <- ctx.Err()
				return
			}
			after = ids[len(ids)-1]
		}
	})
	for p := range pages {
		<-p.read
		if p.err != nil {
			return p.err
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	return <-listed
}

// fitChurnModel fits the BG/NBD model to the purchases of the viewer's
// tenant up to asOf and stores it, with the tenant's high-value threshold.
// It keeps 32 bytes a customer who bought: the history and the average
// purchase.
func (a *Service) fitChurnModel(ctx context.Context, loc *time.Location, asOf time.Time) (*ent.ChurnModel, error) {
	var hs []churn.History
	var averages []int64
	err := a.eachPurchasePage(ctx, loc, asOf, func(p *purchasePage) error {
		for i := range p.bought {
			h, _ := p.bought[i].history(asOf, loc)
			hs, averages = append(hs, h), append(averages, p.bought[i].averageCents())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(hs) < minChurnCustomers {
		return nil, errTooFewForChurn
	}
	params, ll, err := churn.Fit(hs)
	if err != nil {
		return nil, err
	}
	slices.Sort(averages)
	v, _ := viewer.FromContext(ctx)
	return a.k.DB.Ent.ChurnModel.Create().SetTenantID(v.TenantID).SetFittedAt(asOf).SetCustomers(len(hs)).
		SetR(params.R).SetAlpha(params.Alpha).SetA(params.A).SetB(params.B).SetLogLikelihood(ll).
		SetHighValueThreshold(decimal.New(averages[int(float64(len(averages)-1)*highValueQuantile)], -2)).Save(ctx)
}

// FitChurnModel fits the BG/NBD model to the purchases of the viewer's
// tenant up to asOf and stores it, with the tenant's high-value threshold:
// the model customers are scored with until the next fit.
func (a *Service) FitChurnModel(ctx context.Context, asOf time.Time) (*ent.ChurnModel, error) {
	if err := Rules.FitChurnModel.Allow(ctx); err != nil {
		return nil, err
	}
	loc, err := a.k.TenantZone(ctx)
	if err != nil {
		return nil, err
	}
	return a.fitChurnModel(ctx, loc, asOf.UTC().Truncate(time.Microsecond))
}

// latestChurnModel is the tenant's newest model; nil when none was fitted.
func (a *Service) latestChurnModel(ctx context.Context) (*ent.ChurnModel, error) {
	m, err := a.k.DB.Ent.ChurnModel.Query().Order(ent.Desc(churnmodel.FieldFittedAt), ent.Desc(churnmodel.FieldID)).First(ctx)
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
// asOf from its purchases (nil: none).
func score(customerID string, m *ent.ChurnModel, p *purchases, loc *time.Location, asOf time.Time) ChurnScore {
	s := ChurnScore{CustomerID: customerID, Risk: customerscore.RiskUnknown}
	if m != nil {
		at := m.FittedAt
		s.ModelFittedAt = &at
	}
	if p == nil {
		s.Reason = "no purchase yet"
		return s
	}
	h, last := p.history(asOf, loc)
	recency := int(asOf.Sub(last) / day)
	s.Frequency, s.RecencyDays = h.X, &recency
	s.MonetaryValue = p.average()
	if m == nil {
		s.Reason = "the tenant's churn model is not fitted yet: it needs purchases of at least " +
			fmt.Sprint(minChurnCustomers) + " customers"
		return s
	}
	s.HighValue = !s.MonetaryValue.LessThan(m.HighValueThreshold)
	params := churn.Params{R: m.R, Alpha: m.Alpha, A: m.A, B: m.B}
	alive := params.PAlive(h)
	expected := params.ExpectedPurchases(h, weeks(churnHorizonDays*day))
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
func (a *Service) CustomerChurn(ctx context.Context, customerID string) (*ChurnScore, error) {
	if err := Rules.CustomerChurn.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", customerID); err != nil {
		return nil, err
	}
	exists, err := a.k.DB.Ent.Customer.Query().Where(customer.ID(customerID)).Exist(ctx)
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
	loc, err := a.k.TenantZone(ctx)
	if err != nil {
		return nil, err
	}
	now := a.k.Now().UTC()
	bought, err := a.purchaseRange(ctx, loc, now, nil, customerID)
	if err != nil {
		return nil, err
	}
	var p *purchases
	if len(bought) == 1 {
		p = &bought[0]
	}
	s := score(customerID, m, p, loc, now)
	return &s, nil
}

// RefreshChurnScores asks for the viewer's tenant's customers to be scored
// now (the model refitted if it is due) by a River job, rather than at the
// next daily run; queued is false when a run was already waiting.
func (a *Service) RefreshChurnScores(ctx context.Context) (queued bool, err error) {
	if err := Rules.RefreshChurnScores.Allow(ctx); err != nil {
		return false, err
	}
	tenantID, err := kernel.ViewerTenant(ctx)
	if err != nil {
		return false, err
	}
	rc, err := a.k.Jobs()
	if err != nil {
		return false, err
	}
	res, err := rc.Insert(ctx, jobs.ScoreCustomers{TenantID: tenantID}, nil)
	if err != nil {
		return false, err
	}
	return !res.UniqueSkippedAsDuplicate, nil
}

// RunCustomerScoring works jobs.ScoreCustomers: it scores the customers of
// the job's tenant now, as ScoreCustomers does, or, for the daily run that
// names none, of every active tenant; a tenant that fails does not stop the
// others.
func (a *Service) RunCustomerScoring(ctx context.Context, args jobs.ScoreCustomers) error {
	if err := Rules.RunCustomerScoring.Allow(ctx); err != nil {
		return err
	}
	if args.TenantID != "" {
		_, err := a.scoreCustomers(viewer.TenantContext(ctx, args.TenantID), a.k.Now())
		return err
	}
	return a.k.EachActiveTenant(ctx, "scoring", func(ctx context.Context) error {
		_, err := a.scoreCustomers(ctx, a.k.Now())
		return err
	})
}

// ScoreCustomers scores every customer of the viewer's tenant at asOf,
// refitting the model first when the newest is older than the tenant's
// churn_refit_days (or there is none). Each page of customers is scored as
// it is read, its writes overlapping the reads of the next pages. A tenant
// too small to fit keeps its last model (or none) and is scored with it.
func (a *Service) ScoreCustomers(ctx context.Context, asOf time.Time) (int, error) {
	if err := Rules.ScoreCustomers.Allow(ctx); err != nil {
		return 0, err
	}
	return a.scoreCustomers(ctx, asOf)
}

// scoreCustomers is ScoreCustomers without its policy check, for the operations
// of this context that call it.
func (a *Service) scoreCustomers(ctx context.Context, asOf time.Time) (int, error) {
	asOf = asOf.UTC().Truncate(time.Microsecond)
	t, err := a.k.TenantSettings(ctx)
	if err != nil {
		return 0, err
	}
	loc, err := points.Zone(t.TimeZone)
	if err != nil {
		return 0, err
	}
	m, err := a.latestChurnModel(ctx)
	if err != nil {
		return 0, err
	}
	if m == nil || !asOf.Before(m.FittedAt.AddDate(0, 0, t.ChurnRefitDays)) {
		switch fitted, err := a.fitChurnModel(ctx, loc, asOf); {
		case err == nil:
			m = fitted
		case !errors.Is(err, errTooFewForChurn) && !errors.Is(err, churn.ErrNoFit):
			return 0, err
		}
	}
	scored := 0
	err = a.eachPurchasePage(ctx, loc, asOf, func(p *purchasePage) error {
		scored += len(p.ids)
		return a.writeScores(ctx, m, loc, asOf, p.ids, p.bought)
	})
	if err != nil {
		return scored, err
	}
	return scored, a.Audiences.RecomputeTenant(ctx)
}

// writeScores replaces the scores of the customers ids (in id order, read
// through the viewer's policies) with their scores under m at asOf, from
// bought, the purchases of those who bought, in id order;
// churnWriteBatch customers per transaction.
func (a *Service) writeScores(ctx context.Context, m *ent.ChurnModel, loc *time.Location, asOf time.Time, ids []string, bought []purchases) error {
	v, _ := viewer.FromContext(ctx)
	for len(ids) > 0 {
		batch := ids[:min(churnWriteBatch, len(ids))]
		ids = ids[len(batch):]
		ctx := schema.RememberRead(ctx, batch)
		err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
			// The batch's previous scores go: a range of ids, so that the
			// delete walks the unique index on customer_id.
			_, err := tx.Ent.CustomerScore.Delete().
				Where(customerscore.CustomerIDGTE(batch[0]), customerscore.CustomerIDLTE(batch[len(batch)-1])).Exec(ctx)
			if err != nil {
				return err
			}
			creates := make([]*ent.CustomerScoreCreate, len(batch))
			for i, id := range batch {
				var p *purchases
				if len(bought) > 0 && bought[0].customerID == id {
					p, bought = &bought[0], bought[1:]
				}
				s := score(id, m, p, loc, asOf)
				creates[i] = tx.Ent.CustomerScore.Create().SetTenantID(v.TenantID).SetCustomerID(id).SetScoredAt(asOf).SetRisk(s.Risk).
					SetReason(s.Reason).SetNillablePAlive(s.PAlive).SetNillableExpectedPurchases90d(s.ExpectedPurchases90d).
					SetFrequency(s.Frequency).SetNillableRecencyDays(s.RecencyDays).SetMonetaryValue(s.MonetaryValue).SetHighValue(s.HighValue).
					SetNillableModelFittedAt(s.ModelFittedAt)
			}
			return tx.Ent.CustomerScore.CreateBulk(creates...).Exec(ctx)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
