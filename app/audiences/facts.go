package audiences

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fideliza/fideliza/domain/audience"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/customerscore"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/rollupcustomerstore"
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

func (s scope) purchases() []predicate.RollupCustomerStore {
	if s.ids != nil {
		return []predicate.RollupCustomerStore{rollupcustomerstore.CustomerIDIn(s.ids...)}
	}
	return []predicate.RollupCustomerStore{rollupcustomerstore.CustomerIDGT(s.after), rollupcustomerstore.CustomerIDLTE(s.upTo)}
}

func (s scope) score() []predicate.CustomerScore {
	if s.ids != nil {
		return []predicate.CustomerScore{customerscore.CustomerIDIn(s.ids...)}
	}
	return []predicate.CustomerScore{customerscore.CustomerIDGT(s.after), customerscore.CustomerIDLTE(s.upTo)}
}

// needs says which facts the rules read: the columns of the customer's
// row (besides its id), and whether its purchases, churn score or static
// segments, so that a rule over the lifetime value reads that column alone
// and a rule over the profile reads no purchases.
type needs struct {
	columns                 []string
	sales, scores, segments bool
}

// columnsOf are the customer's columns each fact of its row is read from.
var columnsOf = map[string][]string{
	"level":          {customer.FieldLevel},
	"points":         {customer.FieldPointsBalance},
	"lifetime_value": {customer.FieldLifetimeValue},
	"birthday_month": {customer.FieldBirthDate},
	"city":           {customer.FieldAddressCity},
	"state":          {customer.FieldAddressState},
	"consents": {customer.FieldConsentMarketingEmail, customer.FieldConsentMarketingSms,
		customer.FieldConsentMarketingWhatsapp, customer.FieldConsentDataSharing},
}

func needsOf(rules []*audience.Rule) needs {
	var n needs
	for _, r := range rules {
		for _, name := range r.Names() {
			for _, c := range columnsOf[name] {
				if !slices.Contains(n.columns, c) {
					n.columns = append(n.columns, c)
				}
			}
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

func readStores(ctx context.Context, c *ent.Client) (storesOf, error) {
	all, err := c.Store.Query().Select(store.FieldCode, store.FieldGroups).All(ctx)
	if err != nil {
		return nil, err
	}
	stores := storesOf{}
	for _, s := range all {
		stores[s.ID] = s
	}
	return stores, nil
}

// reader reads the facts of pages of customers through c, as of now in loc
// (days are local days).
type reader struct {
	c          *ent.Client
	concurrent bool // c is no transaction: pages may read on several connections at once
	now        time.Time
	loc        *time.Location
	needs      needs
	stores     storesOf // read when the rules read purchases
}

// facts reads the facts of the customers of sc, in id order.
func (r *reader) facts(ctx context.Context, sc *scope) ([]string, []audience.Facts, error) {
	p, err := r.profiles(ctx, sc)
	if err == nil && len(p.ids) > 0 {
		err = r.more(ctx, p)
	}
	return p.ids, p.facts, err
}

// page is the facts of a page of customers, in id order; at is where a
// customer's id is in ids.
type page struct {
	sc    scope
	ids   []string
	facts []audience.Facts
	at    map[string]int
	err   error         // of reading the purchases and scores
	read  chan struct{} // closed once they are read
}

// profiles reads the facts of the rows of the customers of sc, in id order:
// the columns the rules name, and their static segments.
func (r *reader) profiles(ctx context.Context, sc *scope) (*page, error) {
	q := r.c.Customer.Query().Where(sc.customer()...).Order(ent.Asc(customer.FieldID)).Select(r.needs.columns...)
	if r.needs.segments {
		q.WithSegments(func(q *ent.SegmentQuery) { q.Where(segment.RuleIsNil()).Select(segment.FieldID) })
	}
	open := sc.ids == nil && sc.upTo == ""
	if open {
		q.Limit(readBatch)
	}
	custs, err := q.All(ctx)
	if err != nil || len(custs) == 0 {
		return &page{sc: *sc}, err
	}
	if open {
		sc.upTo = custs[len(custs)-1].ID
	}
	p := &page{sc: *sc, ids: make([]string, len(custs)), facts: make([]audience.Facts, len(custs)), at: make(map[string]int, len(custs))}
	for i, c := range custs {
		p.ids[i], p.at[c.ID] = c.ID, i
		p.facts[i] = profileFacts(c)
	}
	return p, nil
}

// more adds the purchase facts and churn scores of p's customers, if the
// rules read them.
func (r *reader) more(ctx context.Context, p *page) error {
	if r.needs.sales {
		if err := r.salesFacts(ctx, p.sc, p.at, p.facts); err != nil {
			return err
		}
	}
	if !r.needs.scores {
		return nil
	}
	scores, err := r.c.CustomerScore.Query().Where(p.sc.score()...).
		Select(customerscore.FieldCustomerID, customerscore.FieldRisk, customerscore.FieldPAlive).All(ctx)
	if err != nil {
		return err
	}
	for _, s := range scores {
		if i, ok := p.at[s.CustomerID]; ok {
			p.facts[i].ChurnRisk = string(s.Risk)
			if s.PAlive != nil {
				p.facts[i].ProbabilityAlive = *s.PAlive
			}
		}
	}
	return nil
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

// salesFacts adds the purchase facts of the customers of sc from their
// processed sales by store (a sale returned or cancelled whole is no
// purchase), which the database keeps counted (rollup_customer_stores).
func (r *reader) salesFacts(ctx context.Context, sc scope, at map[string]int, facts []audience.Facts) error {
	rows, err := r.c.RollupCustomerStore.Query().Where(sc.purchases()...).Where(rollupcustomerstore.PurchasesGT(0)).All(ctx)
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
		days := today - dayOf(v.LastSoldAt, r.loc)
		f := &facts[i]
		f.Purchases += v.Purchases
		if f.DaysSinceLastPurchase < 0 || days < f.DaysSinceLastPurchase {
			f.DaysSinceLastPurchase = days
		}
		st := r.stores[v.StoreID]
		if st == nil {
			continue
		}
		if n := most[v.CustomerID]; v.Purchases > n || v.Purchases == n && st.Code < f.StoreMostVisited {
			most[v.CustomerID], f.StoreMostVisited = v.Purchases, st.Code
		}
		for _, g := range st.Groups {
			if f.GroupPurchases == nil {
				f.GroupPurchases, f.GroupDaysSinceLastPurchase = map[string]int64{}, map[string]int64{}
			}
			f.GroupPurchases[g] += v.Purchases
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

// readers is how many pages a concurrent reader reads ahead, each on its
// own connection, while the rules evaluate the page before.
const readers = 2

// pages reads the facts of every customer of the viewer's tenant, a page at
// a time in id order, handing each to fn. A concurrent reader (one outside
// a transaction) reads the next pages while fn runs: the rows of a page,
// then its purchases and scores while the rows of the next are read.
func (r *reader) pages(ctx context.Context, fn func(sc scope, ids []string, facts []audience.Facts) error) error {
	if !r.concurrent {
		for after := ""; ; {
			sc := scope{after: after}
			ids, facts, err := r.facts(ctx, &sc)
			if err != nil || len(ids) == 0 {
				return err
			}
			if err := fn(sc, ids, facts); err != nil || len(ids) < readBatch {
				return err
			}
			after = sc.upTo
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	// The lister and the readers stop and are waited for, whatever fn did.
	var running sync.WaitGroup
	defer func() { cancel(); running.Wait() }()
	pages := make(chan *page, readers)
	listed := make(chan error, 1)
	running.Go(func() {
		defer close(pages)
		for after := ""; ; {
			sc := scope{after: after}
			p, err := r.profiles(ctx, &sc)
			if err != nil || len(p.ids) == 0 {
				listed <- err
				return
			}
			p.read = make(chan struct{})
			running.Go(func() {
				defer close(p.read)
				p.err = r.more(ctx, p)
			})
			select {
			case pages <- p:
			case <-ctx.Done():
				listed <- ctx.Err()
				return
			}
			if len(p.ids) < readBatch {
				listed <- nil
				return
			}
			after = sc.upTo
		}
	})
	for p := range pages {
		<-p.read
		if p.err != nil {
			return p.err
		}
		if err := fn(p.sc, p.ids, p.facts); err != nil {
			return err
		}
	}
	return <-listed
}
