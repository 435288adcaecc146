package audiences

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fideliza/fideliza/domain/audience"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/customerscore"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/segment"
	"github.com/fideliza/fideliza/ent/store"
)

// readBatch is how many customers one page of facts reads: a bounded id
// range per statement, as the churn scoring reads purchases.
const readBatch = 5000

// scope is which customers a read of facts covers: the ids in (after,
// upTo] (after "" from the first), or exactly ids; upTo "" is the next
// readBatch customers after after, and the read sets it.
type scope struct {
	after, upTo string
	ids         []string
}

func (s scope) customer() []predicate.Customer {
	if s.ids != nil {
		return []predicate.Customer{customer.IDIn(s.ids...)}
	}
	if s.upTo == "" {
		return []predicate.Customer{customer.IDGT(s.after)}
	}
	return []predicate.Customer{customer.IDGT(s.after), customer.IDLTE(s.upTo)}
}

func (s scope) sale() []predicate.Sale {
	if s.ids != nil {
		return []predicate.Sale{sale.CustomerIDIn(s.ids...)}
	}
	return []predicate.Sale{sale.CustomerIDGT(s.after), sale.CustomerIDLTE(s.upTo)}
}

func (s scope) score() []predicate.CustomerScore {
	if s.ids != nil {
		return []predicate.CustomerScore{customerscore.CustomerIDIn(s.ids...)}
	}
	return []predicate.CustomerScore{customerscore.CustomerIDGT(s.after), customerscore.CustomerIDLTE(s.upTo)}
}

// needs says which groups of facts the rules read, so that a rule over the
// profile alone reads no sales.
type needs struct{ sales, scores, segments bool }

func needsOf(rules []*audience.Rule) needs {
	var n needs
	for _, r := range rules {
		for _, name := range r.Names() {
			switch name {
			case "purchases", "days_since_last_purchase", "group_purchases", "group_days_since_last_purchase", "store_most_visited":
				n.sales = true
			case "churn_risk", "probability_alive":
				n.scores = true
			case "segments":
				n.segments = true
			}
		}
	}
	return n
}

// storesOf are the codes and groups of the viewer's tenant's stores.
type storesOf map[string]*ent.Store

func (r *reader) stores(ctx context.Context) (storesOf, error) {
	if r.storeList != nil {
		return r.storeList, nil
	}
	all, err := r.c.Store.Query().Select(store.FieldCode, store.FieldGroups).All(ctx)
	if err != nil {
		return nil, err
	}
	r.storeList = storesOf{}
	for _, s := range all {
		r.storeList[s.ID] = s
	}
	return r.storeList, nil
}

// reader reads the facts of pages of customers through c, as of now in loc
// (days are local days).
type reader struct {
	c         *ent.Client
	now       time.Time
	loc       *time.Location
	needs     needs
	storeList storesOf
}

// facts reads the facts of the customers of sc, in id order.
func (r *reader) facts(ctx context.Context, sc *scope) ([]string, []audience.Facts, error) {
	q := r.c.Customer.Query().Where(sc.customer()...).Order(ent.Asc(customer.FieldID)).
		Select(customer.FieldLevel, customer.FieldPointsBalance, customer.FieldLifetimeValue, customer.FieldBirthDate,
			customer.FieldAddressCity, customer.FieldAddressState, customer.FieldConsentMarketingEmail,
			customer.FieldConsentMarketingSms, customer.FieldConsentMarketingWhatsapp, customer.FieldConsentDataSharing)
	if r.needs.segments {
		q.WithSegments(func(q *ent.SegmentQuery) { q.Where(segment.RuleIsNil()).Select(segment.FieldID) })
	}
	open := sc.ids == nil && sc.upTo == ""
	if open {
		q.Limit(readBatch)
	}
	custs, err := q.All(ctx)
	if err != nil || len(custs) == 0 {
		return nil, nil, err
	}
	if open {
		sc.upTo = custs[len(custs)-1].ID
	}
	ids := make([]string, len(custs))
	facts := make([]audience.Facts, len(custs))
	at := make(map[string]int, len(custs))
	for i, c := range custs {
		ids[i], at[c.ID] = c.ID, i
		facts[i] = profileFacts(c)
	}
	if r.needs.sales {
		if err := r.salesFacts(ctx, *sc, at, facts); err != nil {
			return nil, nil, err
		}
	}
	if r.needs.scores {
		scores, err := r.c.CustomerScore.Query().Where(sc.score()...).
			Select(customerscore.FieldCustomerID, customerscore.FieldRisk, customerscore.FieldPAlive).All(ctx)
		if err != nil {
			return nil, nil, err
		}
		for _, s := range scores {
			if i, ok := at[s.CustomerID]; ok {
				facts[i].ChurnRisk = string(s.Risk)
				if s.PAlive != nil {
					facts[i].ProbabilityAlive = *s.PAlive
				}
			}
		}
	}
	return ids, facts, nil
}

// profileFacts are the facts of a customer's own row.
func profileFacts(c *ent.Customer) audience.Facts {
	f := audience.Facts{
		Level: string(c.Level), Points: c.PointsBalance, LifetimeValue: c.LifetimeValue.Round(2).InexactFloat64(),
		DaysSinceLastPurchase: -1, ChurnRisk: "unknown", ProbabilityAlive: -1,
	}
	if c.BirthDate != nil && len(*c.BirthDate) >= 7 {
		var m int64
		if _, err := fmt.Sscanf((*c.BirthDate)[5:7], "%d", &m); err == nil {
			f.BirthdayMonth = m
		}
	}
	if c.AddressCity != nil {
		f.City = *c.AddressCity
	}
	if c.AddressState != nil {
		f.State = *c.AddressState
	}
	for _, consent := range []struct {
		on   bool
		name string
	}{{c.ConsentMarketingEmail, "email"}, {c.ConsentMarketingSms, "sms"}, {c.ConsentMarketingWhatsapp, "whatsapp"}, {c.ConsentDataSharing, "data_sharing"}} {
		if consent.on {
			f.Consents = append(f.Consents, consent.name)
		}
	}
	for _, s := range c.Edges.Segments {
		f.Segments = append(f.Segments, s.ID)
	}
	return f
}

// visits is one customer's processed sales in one store.
type visits struct {
	CustomerID string `json:"customer_id"`
	StoreID    string `json:"store_id"`
	Count      int64  `json:"count"`
	Last       any    `json:"last"` // the latest sold_at: a time, or SQLite's text of one
}

// salesFacts adds the purchase facts of the customers of sc: their
// processed sales (a sale returned or cancelled whole is no purchase),
// counted in SQL by customer and store.
func (r *reader) salesFacts(ctx context.Context, sc scope, at map[string]int, facts []audience.Facts) error {
	stores, err := r.stores(ctx)
	if err != nil {
		return err
	}
	var rows []visits
	err = r.c.Sale.Query().Where(sc.sale()...).Where(sale.StatusIn(sale.StatusPROCESSED, sale.StatusPARTIALLY_RETURNED)).
		GroupBy(sale.FieldCustomerID, sale.FieldStoreID).
		Aggregate(ent.As(ent.Count(), "count"), ent.As(ent.Max(sale.FieldSoldAt), "last")).Scan(ctx, &rows)
	if err != nil {
		return err
	}
	today := dayOf(r.now, r.loc)
	most := map[string]int64{} // a customer's visits of its most visited store so far
	for _, v := range rows {
		i, ok := at[v.CustomerID]
		if !ok {
			continue
		}
		last, err := timeOf(v.Last)
		if err != nil {
			return err
		}
		days := today - dayOf(last, r.loc)
		f := &facts[i]
		f.Purchases += v.Count
		if f.DaysSinceLastPurchase < 0 || days < f.DaysSinceLastPurchase {
			f.DaysSinceLastPurchase = days
		}
		st := stores[v.StoreID]
		if st == nil {
			continue
		}
		if n := most[v.CustomerID]; v.Count > n || v.Count == n && st.Code < f.StoreMostVisited {
			most[v.CustomerID], f.StoreMostVisited = v.Count, st.Code
		}
		for _, g := range st.Groups {
			if f.GroupPurchases == nil {
				f.GroupPurchases, f.GroupDaysSinceLastPurchase = map[string]int64{}, map[string]int64{}
			}
			f.GroupPurchases[g] += v.Count
			if d, ok := f.GroupDaysSinceLastPurchase[g]; !ok || days < d {
				f.GroupDaysSinceLastPurchase[g] = days
			}
		}
	}
	return nil
}

// dayOf numbers t's local day in loc.
func dayOf(t time.Time, loc *time.Location) int64 {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// sqliteTimes are the layouts SQLite's driver writes times in.
var sqliteTimes = []string{"2006-01-02 15:04:05.999999999-07:00", "2006-01-02T15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999", time.RFC3339Nano}

// timeOf reads an aggregate's time: PostgreSQL gives a time, SQLite its
// text.
func timeOf(v any) (time.Time, error) {
	switch v := v.(type) {
	case time.Time:
		return v, nil
	case []byte:
		return timeOf(string(v))
	case string:
		for _, layout := range sqliteTimes {
			if t, err := time.Parse(layout, strings.TrimSuffix(v, "Z")); err == nil {
				return t, nil
			}
			if t, err := time.Parse(layout, v); err == nil {
				return t, nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("audiences: a sale's time %v (%T) is no time", v, v)
}

// pages reads the facts of every customer of the viewer's tenant, a page at
// a time in id order, handing each to fn.
func (r *reader) pages(ctx context.Context, fn func(sc scope, ids []string, facts []audience.Facts) error) error {
	after := ""
	for {
		sc := scope{after: after}
		ids, facts, err := r.facts(ctx, &sc)
		if err != nil || len(ids) == 0 {
			return err
		}
		if err := fn(sc, ids, facts); err != nil {
			return err
		}
		after = sc.upTo
		if len(ids) < readBatch {
			return nil
		}
	}
}
