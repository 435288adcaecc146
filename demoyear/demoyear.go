// Package demoyear is the living demo: a year of a retailer's life,
// generated from a seed and played through the application's operations a
// real one goes through (customers imported, POS sales registered and
// processed, online orders validated and redeemed, returns, points spent
// and expired, levels recomputed, churn scored), each on a clock of its own
// set to the simulated instant. The application plays it through
// app.App.History: serve --demo's tenant and every new or reset sandbox.
package demoyear

import (
	"context"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/salereturn"
	"github.com/fideliza/fideliza/ent/schema/fold"
	"github.com/fideliza/fideliza/ent/schema/sealed"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
)

// The generator's fixed inputs.
const (
	demoSeed         = 2026
	demoExpiryMonths = 8 // so that the year shows points expiring
	// demoFirstReceipt numbers the year's receipts above those the guides
	// send.
	demoFirstReceipt = 500_000
)

// demoSize is how much history the generator plays: shoppers over days.
type demoSize struct{ shoppers, days int }

var (
	// demoYearSize is serve --demo's: a year, every level reached.
	demoYearSize = demoSize{shoppers: 2000, days: 365}
	// sandboxSize is a sandbox's: the same life, small enough for a
	// sandbox's creation or reset to answer within seconds.
	sandboxSize = demoSize{shoppers: 150, days: 90}
)

// protocolSale is the point-of-sale protocol the year's sales and returns
// speak.
const protocolSale = "PARTNER_V1"

var (
	demoFirstNames = []string{"Adriana", "Alessandra", "Aline", "Amanda", "Beatriz", "Bruna", "Camila", "Carolina",
		"Cláudia", "Daniela", "Débora", "Eduarda", "Elaine", "Gabriela", "Helena", "Isabela", "Juliana", "Larissa",
		"Letícia", "Luana", "Márcia", "Mariana", "Natália", "Patrícia", "Priscila", "Renata", "Sandra", "Simone",
		"Tatiane", "Vanessa", "Alexandre", "André", "Antônio", "Caio", "Carlos", "César", "Daniel", "Eduardo",
		"Felipe", "Fernando", "Gabriel", "Guilherme", "Gustavo", "Henrique", "João", "José", "Leonardo", "Lucas",
		"Luiz", "Marcelo", "Marcos", "Mateus", "Paulo", "Pedro", "Rafael", "Ricardo", "Rodrigo", "Sérgio",
		"Thiago", "Vinícius"}
	demoSurnames = []string{"Almeida", "Alves", "Araújo", "Barbosa", "Barros", "Batista", "Cardoso", "Carvalho",
		"Castro", "Costa", "Correia", "Dias", "Duarte", "Fernandes", "Ferreira", "Freitas", "Gomes", "Lima", "Lopes",
		"Machado", "Martins", "Melo", "Mendes", "Monteiro", "Moreira", "Nascimento", "Nunes", "Oliveira", "Pereira",
		"Pinto", "Ramos", "Reis", "Ribeiro", "Rocha", "Rodrigues", "Santos", "Silva", "Soares", "Souza", "Teixeira",
		"Vieira"}
	demoProducts = []struct {
		gtin, name string
		price      int64 // centavos
	}{
		{"7891000100103", "Café torrado 500 g", 1890}, {"7891000053508", "Leite integral 1 L", 549},
		{"7896004000152", "Arroz tipo 1 5 kg", 2790}, {"7891910000197", "Feijão carioca 1 kg", 899},
		{"7894900011517", "Refrigerante 2 L", 1099}, {"7891149101900", "Sabão em pó 1,6 kg", 2490},
		{"7896036090244", "Azeite extravirgem 500 ml", 3990}, {"7891024134702", "Shampoo 400 ml", 2290},
		{"7897517206086", "Fone de ouvido", 8990}, {"7891035800610", "Panela antiaderente", 14990},
		{"7896005800058", "Vinho tinto 750 ml", 5990}, {"7891079000212", "Chocolate 170 g", 899},
	}
)

// year plays the history through the operations of an application on the
// year's clock.
type year struct{ *app.App }

// demoShopper is a generated customer and the habits the year plays.
type demoShopper struct {
	cpf, id string
	joins   int     // the day (from the first) the customer registers
	leaves  int     // the day after which the customer stops buying
	perYear float64 // purchases a year while a customer
	ticket  float64 // the usual purchase, R$
	store   int     // the usual store
	online  bool    // buys online too
	balance int64   // points, as the year goes (to decide on spending)
	// tillSpent is the points paid at the till, and those the sales so
	// paid did not earn: balance does not count them, so that the year's
	// other draws are those it made before points paid at the till.
	tillSpent int64
}

// demoEvent is something a day of the year holds.
type demoEvent struct {
	at      time.Time
	shopper int
	kind    int // demoPurchase, demoReturn
	saleRef string
	store   string // a return's store, its sale's
	// seed seeds the purchase's own draws (where, what, how paid), so that
	// they do not depend on the order of the year's days.
	seed uint64
	// club marks a store visit the club's offer brings: played for its
	// treated customers only.
	club bool
}

const (
	demoPurchase = iota
	demoReturn
)

// Play gives a tenant holding the small demo's data (app's seed) a history
// ending at end: a year with full (serve --demo's tenant), else a few
// months (a sandbox's). It is an app.HistoryFunc.
func Play(ctx context.Context, a *app.App, tenantID string, end time.Time, full bool) error {
	size := sandboxSize
	if full {
		size = demoYearSize
	}
	return play(ctx, a, tenantID, end, size)
}

// play gives the tenant a history of size ending at end.
func play(ctx context.Context, a *app.App, tenantID string, end time.Time, size demoSize) error {
	// The year allocates much and keeps little: fewer collections leave
	// the second core to the database.
	defer debug.SetGCPercent(debug.SetGCPercent(1000))
	tenant, err := a.DB.Ent.Tenant.Get(viewer.SystemContext(ctx), tenantID)
	if err != nil {
		return err
	}
	loc, err := points.Zone(tenant.TimeZone)
	if err != nil {
		return err
	}
	today := time.Date(end.In(loc).Year(), end.In(loc).Month(), end.In(loc).Day(), 0, 0, 0, 0, loc)
	first := today.AddDate(0, 0, -size.days)
	clock := testclock.New(first)
	setClock := clock.Set
	y := &year{a.Replayer(clock.Now)}
	tctx := viewer.TenantContext(ctx, tenantID)
	sys := viewer.SystemContext(ctx)

	setClock(first.Add(8 * time.Hour))
	months, spendMin := demoExpiryMonths, int64(demoTillMinPoints)
	value, share := decimal.New(1, -2), decimal.New(5, -1) // 100 points pay R$ 1.00, up to half a sale
	if _, err := y.Backoffice.UpdateTenant(sys, tenantID, backoffice.TenantSettings{PointsExpiryMonths: &months,
		PointsValue: &value, PointsSpendMin: &spendMin, PointsSpendMaxShare: &share,
		PointsSpendChannels: &[]string{loyalty.ChannelPOS}}); err != nil {
		return err
	}
	for _, s := range app.DemoStores[2:] {
		if _, err := y.Backoffice.CreateStore(sys, tenantID, s.Code, s.Name, s.State); err != nil {
			return err
		}
	}
	club, err := y.demoYearCampaigns(tctx, first, today)
	if err != nil {
		return err
	}

	shoppers, events := demoYear(first, size)
	byDay := map[int][]demoEvent{}
	for _, e := range events {
		d := int(e.at.Sub(first).Hours() / 24)
		byDay[d] = append(byDay[d], e)
	}
	receipt := demoFirstReceipt
	returns := map[int][]demoEvent{}
	started := time.Now()
	for day := range size.days {
		morning := first.AddDate(0, 0, day).Add(7 * time.Hour)
		setClock(morning)
		monthStart := first.AddDate(0, 0, day).In(loc).Day() == 1
		if monthStart && day > 0 {
			logProgress(a, tenantID, first.AddDate(0, 0, day-1), day, size.days, receipt-demoFirstReceipt, started)
		}
		if err := y.demoUpkeep(ctx, day, monthStart); err != nil {
			return err
		}
		if err := y.demoJoin(tctx, shoppers, day); err != nil {
			return err
		}
		todays := append(byDay[day], returns[day]...)
		slices.SortFunc(todays, func(a, b demoEvent) int { return a.at.Compare(b.at) })
		// The day's store sales are registered together, as the stores'
		// points of sale send them, and processed at closing time in one
		// transaction; returns and online orders happen at their hour.
		var sales []demoSale
		for _, e := range todays {
			sh := &shoppers[e.shopper]
			if e.club && !club.treats(sh) {
				continue
			}
			setClock(e.at)
			rng := rand.New(rand.NewPCG(e.seed, demoSeed))
			var err error
			switch {
			case e.kind == demoReturn:
				err = y.demoReturn(tctx, tenantID, e)
			case sh.online && !e.club && rng.IntN(4) == 0:
				receipt++
				err = y.demoOrder(tctx, rng, sh, receipt)
				if err == nil {
					err = y.demoSpend(tctx, rng, sh, receipt)
				}
			default:
				receipt++
				sl := demoNewSale(rng, e, sh, receipt)
				if err = y.demoClubDiscount(tctx, club, &sl); err == nil {
					err = y.demoPayWithPoints(tctx, rand.New(rand.NewPCG(e.seed, demoSeed+1)), sh, &sl)
				}
				sales = append(sales, sl)
			}
			if err != nil {
				return err
			}
		}
		setClock(first.AddDate(0, 0, day).Add(22 * time.Hour))
		if err := y.demoSales(tctx, sales); err != nil {
			return err
		}
		for _, sl := range sales {
			sh := &shoppers[sl.shopper]
			sh.balance += points.Earned(*sl.in.AmountPayable, decimal.NewFromInt(1))
			if back := day + 1 + sl.rng.IntN(10); sl.rng.IntN(40) == 0 && back < size.days {
				returns[back] = append(returns[back], demoEvent{at: sl.at.AddDate(0, 0, back-day).Add(time.Hour),
					shopper: sl.shopper, kind: demoReturn, saleRef: sl.id, store: sl.in.StoreID})
			}
			if err := y.demoSpend(tctx, sl.rng, sh, sl.receipt); err != nil {
				return err
			}
		}
	}
	setClock(end)
	// The year's campaigns end today: their stored status is ended before
	// anything reads it, as the lifecycle job would store it a minute later.
	if err := y.Campaigns.RunCampaignLifecycle(ctx, jobs.CampaignLifecycle{}); err != nil {
		return err
	}
	if err := y.Loyalty.ExpirePoints(ctx, jobs.ExpirePoints{}); err != nil {
		return err
	}
	if err := y.Loyalty.RecomputeLevels(ctx, jobs.RecomputeLevels{}); err != nil {
		return err
	}
	if _, err := y.Scoring.FitChurnModel(tctx, end); err != nil {
		return err
	}
	if _, err = y.Scoring.ScoreCustomers(tctx, end); err != nil {
		return err
	}
	// An audience, kept by its rule from now on: regulars drifting away.
	_, err = y.Customers.CreateSegment(tctx, customers.SegmentInput{Name: opt.Of("Regulares esfriando").Ptr(), Description: &demoAudienceText, Rule: &DemoAudienceRule})
	return err
}

// logProgress logs, at the end of a month of the history, how much of it
// is played: the year of serve --demo takes a minute or more, and says so
// as it goes.
func logProgress(a *app.App, tenantID string, through time.Time, played, days, purchases int, started time.Time) {
	a.Logger().Info("demo history: "+through.Format("January 2006")+" played",
		"tenant", tenantID, "percent", played*100/days, "days_played", played, "days", days,
		"purchases", purchases, "seconds", int(time.Since(started).Seconds()))
}

// DemoAudienceRule is the rule of the demo's audience (the guide
// docs/guides/audiences-and-experiments.md reads it).
var (
	DemoAudienceRule = `purchases >= 6 && churn_risk in ["medium", "high"]`
	demoAudienceText = "Bought at least six times, and the churn model says they are drifting away."
)

// demoYear draws the shoppers and their purchases over the year, each
// shopper from a stream of its own and each purchase's day by the inverse
// of the calendar's distribution (demoCalendar): the same draws whatever
// the year's last day, so that the year differs from one day's to the
// next's only by where the calendar puts the purchases.
func demoYear(first time.Time, size demoSize) ([]demoShopper, []demoEvent) {
	cal := newDemoCalendar(first, size.days)
	shoppers := make([]demoShopper, size.shoppers)
	var events []demoEvent
	for i := range shoppers {
		rng := rand.New(rand.NewPCG(demoSeed, uint64(i)))
		sh := &shoppers[i]
		sh.cpf = document.CPFOf(510_000_000 + i*7)
		if rng.IntN(10) < 3 {
			sh.joins = rng.IntN(size.days - 30)
		}
		sh.leaves = size.days
		if rng.IntN(4) == 0 {
			sh.leaves = sh.joins + rng.IntN(size.days-sh.joins)
		}
		// Habits: most shop now and then, a few every week, some every
		// few days with a full basket (the diamond tier).
		switch r := rng.IntN(100); {
		case r < 60:
			sh.perYear, sh.ticket = 1+rng.Float64()*3, 60+rng.Float64()*120
		case r < 88:
			sh.perYear, sh.ticket = 4+rng.Float64()*5, 90+rng.Float64()*110
		case r < 98:
			sh.perYear, sh.ticket = 24+rng.Float64()*10, 170+rng.Float64()*100
		default:
			sh.perYear, sh.ticket = 70+rng.Float64()*20, 300+rng.Float64()*150
		}
		sh.store = rng.IntN(len(app.DemoStores))
		sh.online = rng.IntN(3) == 0
		purchase := func(from, to int, club bool) demoEvent {
			day := cal.day(rng, from, to)
			at := first.AddDate(0, 0, day).Add(time.Duration(9*60+rng.IntN(12*60)) * time.Minute)
			return demoEvent{at: at, shopper: i, kind: demoPurchase, seed: rng.Uint64(), club: club}
		}
		days := float64(sh.leaves-sh.joins) / 365 // of a year, the unit of perYear
		for range demoPoisson(rng, sh.perYear*days) {
			events = append(events, purchase(sh.joins, sh.leaves, false))
		}
		// The visits the club's offer adds over its days, drawn for every
		// shopper (which ones it treats is known once they have ids).
		if from := max(sh.joins, size.days-demoClubDays); from < sh.leaves {
			for range demoPoisson(rng, sh.perYear*float64(sh.leaves-from)/365*demoClubBoost) {
				events = append(events, purchase(from, sh.leaves, true))
			}
		}
	}
	return shoppers, events
}

// demoPoisson draws a Poisson count of mean m (Knuth's method; m is small).
func demoPoisson(rng *rand.Rand, m float64) int {
	l, k, p := math.Exp(-m), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// demoYearCampaigns creates the campaigns the year's orders redeem, all
// ended by today (the live ones are the small demo's, which the README and
// the guides use), and one scheduled next month.
func (a *year) demoYearCampaigns(ctx context.Context, first, today time.Time) (*demoClub, error) {
	d := func(v int64) *decimal.Decimal { x := decimal.NewFromInt(v); return &x }
	n := func(v int) *int { return &v }
	at := func(t time.Time) *time.Time { return &t }
	specs := []campaigns.CampaignInput{
		{Name: "Boas-vindas: R$ 15 na primeira compra online", Type: "discount", Channels: []string{"ecommerce"},
			StartsAt: at(first), EndsAt: at(today),
			Discount: &campaigns.DiscountInput{Mode: "fixed_amount", Value: d(15)}, Limits: &campaigns.LimitsInput{PerCustomer: n(1)}},
		{Name: "R$ 20 em compras acima de R$ 200", Type: "discount", Channels: []string{"ecommerce"},
			StartsAt: at(first), EndsAt: at(today),
			Discount:    &campaigns.DiscountInput{Mode: "fixed_amount", Value: d(20)},
			Eligibility: &campaigns.EligibilityInput{MinSubtotal: d(200)}, Limits: &campaigns.LimitsInput{PerCustomer: n(4), Total: n(5000)}},
		{Name: "Semana do cliente: 10% no site", Type: "discount", Channels: []string{"ecommerce"},
			StartsAt: at(first.AddDate(0, 2, 0)), EndsAt: at(first.AddDate(0, 2, 14)),
			Discount: &campaigns.DiscountInput{Mode: "percentage", Value: d(10)}, Limits: &campaigns.LimitsInput{PerCustomer: n(2)}},
		// An experiment: 10% of the customers held out of the stores' offer
		// for its last days (its lift: Campaign.lift, the insights page).
		{Name: demoClubName, Type: "discount", Channels: []string{"pdv"},
			StartsAt: at(today.AddDate(0, 0, -demoClubDays)), EndsAt: at(today), HoldoutBasisPoints: demoClubHoldout,
			Discount: &campaigns.DiscountInput{Mode: "percentage", Value: d(5)}},
		{Name: "Natal: 5% de cashback online", Type: "cashback", Channels: []string{"ecommerce"},
			StartsAt: at(today.AddDate(0, 1, 0)), EndsAt: at(today.AddDate(0, 2, 0)),
			Discount: &campaigns.DiscountInput{Mode: "percentage", Value: d(5), CreditAfterDays: n(7)}},
	}
	club := &demoClub{}
	for _, in := range specs {
		c, err := a.Campaigns.CreateCampaign(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("demo campaign %q: %w", in.Name, err)
		}
		if in.Name == demoClubName {
			club.id, club.starts = c.ID, c.StartsAt
		}
	}
	return club, nil
}

// demoUpkeep runs the jobs of the morning of day: the campaigns'
// lifecycle daily, expiry weekly, the levels on the first of the month
// (each credit moves a level up already).
func (a *year) demoUpkeep(ctx context.Context, day int, monthStart bool) error {
	if err := a.Campaigns.RunCampaignLifecycle(ctx, jobs.CampaignLifecycle{}); err != nil {
		return err
	}
	if day%7 == 6 {
		// The year fills empty tables: the planner learns their sizes
		// weekly (storage.RefreshStatistics).
		if err := a.DB.RefreshStatistics(ctx); err != nil {
			return err
		}
		if err := a.Loyalty.ExpirePoints(ctx, jobs.ExpirePoints{}); err != nil {
			return err
		}
	}
	if monthStart {
		return a.Loyalty.RecomputeLevels(ctx, jobs.RecomputeLevels{})
	}
	return nil
}

// demoJoin imports the shoppers who register on day, and learns their ids.
func (a *year) demoJoin(ctx context.Context, shoppers []demoShopper, day int) error {
	var joining []int
	for i := range shoppers {
		if shoppers[i].joins == day {
			joining = append(joining, i)
		}
	}
	if len(joining) == 0 {
		return nil
	}
	rows := func(yield func(customers.ImportRow, error) bool) {
		for line, i := range joining {
			if !yield(customers.ImportRow{Line: line + 1, In: demoCustomer(i, shoppers[i].cpf, app.DemoStores[shoppers[i].store].City,
				app.DemoStores[shoppers[i].store].State)}, nil) {
				return
			}
		}
	}
	res, err := a.Customers.ImportCustomers(ctx, iter.Seq2[customers.ImportRow, error](rows), customers.ImportOptions{})
	if err != nil {
		return err
	}
	if res.Created != len(joining) {
		return fmt.Errorf("demo customers of day %d: %d of %d created", day, res.Created, len(joining))
	}
	indexes := make([]string, len(joining))
	for k, i := range joining {
		indexes[k] = sealed.MustIndex(shoppers[i].cpf)
	}
	found, err := a.DB.Ent.Customer.Query().Where(customer.DocumentIndexIn(indexes...)).
		Select(customer.FieldID, customer.FieldDocument).All(ctx)
	if err != nil {
		return err
	}
	ids := map[string]string{}
	for _, c := range found {
		ids[c.Document] = c.ID
	}
	for _, i := range joining {
		shoppers[i].id = ids[shoppers[i].cpf]
	}
	return nil
}

// demoCustomer is the i-th generated customer.
func demoCustomer(i int, cpf, city, state string) customers.CustomerInput {
	first := demoFirstNames[i%len(demoFirstNames)]
	last := demoSurnames[(i/len(demoFirstNames)+i*7)%len(demoSurnames)]
	middle := demoSurnames[(i*13+5)%len(demoSurnames)]
	email := fmt.Sprintf("%s.%s%d@example.com", fold.Text(first), fold.Text(last), i)
	in := customers.CustomerInput{
		Name: opt.Of(first + " " + middle + " " + last), Email: opt.Of(email), CPF: opt.Of(cpf),
		Phone:     opt.Of(fmt.Sprintf("+55119%08d", 10_000_000+i*37)),
		BirthDate: opt.Of(fmt.Sprintf("%d-%02d-%02d", 1950+i%55, 1+i%12, 1+i%28)),
		Address: opt.Of(customers.AddressInput{City: opt.Of(city), State: opt.Of(state),
			ZipCode: opt.Of(fmt.Sprintf("%05d-%03d", 10000+i%89999, i%1000))}),
		Consent: opt.Of(customers.ConsentInput{MarketingEmail: opt.Of(i%3 != 0), MarketingSMS: opt.Of(i%5 == 0)}),
	}
	if i%4 == 0 {
		in.ExternalID = opt.Of("ERP-" + strconv.Itoa(100000+i))
	}
	return in
}

// demoOrder is an online order: validated, its best discount redeemed,
// and its points credited.
func (a *year) demoOrder(ctx context.Context, rng *rand.Rand, sh *demoShopper, receipt int) error {
	items, total := demoBasket(rng, sh.ticket)
	cart := eligibility.Cart{}
	for _, it := range items {
		cart.Items = append(cart.Items, eligibility.Item{GTIN: it.GTIN, Quantity: *it.Quantity, UnitPrice: *it.UnitPrice})
	}
	v, err := a.Checkout.ValidateCart(ctx, checkout.ValidateInput{CustomerID: sh.id, Channel: "ecommerce", Cart: cart})
	if err != nil {
		return err
	}
	order := "PED-" + strconv.Itoa(receipt)
	paid := total
	if best := demoBest(v.Eligible); best != nil {
		paid = decimal.Max(total.Sub(best.Benefit.Amount), decimal.Zero).Round(2)
		_, _, err := a.Checkout.RedeemCampaign(ctx, checkout.RedeemInput{CampaignID: best.Campaign.ID, CustomerID: sh.id, OrderID: order,
			Token: v.Token, AmountPaid: paid}, nil)
		if err != nil {
			return err
		}
	}
	_, err = a.Loyalty.CreditPoints(ctx, loyalty.CreditInput{CustomerID: sh.id, OrderID: order, Amount: &paid})
	sh.balance += points.Earned(paid, decimal.NewFromInt(1))
	return err
}

// demoBest is the eligible campaign with the largest discount.
func demoBest(eligible []eligibility.Eligible) *eligibility.Eligible {
	var best *eligibility.Eligible
	for i := range eligible {
		if e := &eligible[i]; e.Benefit.DiscountAmount != nil &&
			(best == nil || e.Benefit.Amount.GreaterThan(best.Benefit.Amount)) {
			best = e
		}
	}
	return best
}

// demoReturn returns one unit of the first item of a sale.
func (a *year) demoReturn(ctx context.Context, tenantID string, e demoEvent) error {
	one := decimal.NewFromInt(1)
	at := a.Now()
	r, err := a.POS.RegisterSaleReturn(ctx, pos.SaleReturnInput{Protocol: protocolSale, SaleRef: e.saleRef, Kind: salereturn.KindReturn,
		ID: "DEV-" + e.saleRef, StoreID: e.store, PosID: "PDV-1", Date: &at, Reason: "troca", Items: []pos.ReturnItemInput{{ID: "1", Quantity: &one}},
		ItemsWereListed: true})
	if err != nil {
		return fmt.Errorf("demo return of %s: %w", e.saleRef, err)
	}
	return a.POS.ProcessSaleReturn(ctx, jobs.ProcessSaleReturn{TenantID: tenantID, ReturnID: r.ID})
}

// demoSpend trades points for a voucher now and then, when the shopper
// has enough.
func (a *year) demoSpend(ctx context.Context, rng *rand.Rand, sh *demoShopper, receipt int) error {
	if sh.id == "" || sh.balance < 1500 || rng.IntN(5) != 0 {
		return nil
	}
	order := "TROCA-" + strconv.Itoa(receipt)
	_, err := a.Loyalty.DebitPoints(ctx, loyalty.DebitInput{CustomerID: sh.id, Points: 1000, OrderID: &order, Reason: "Vale-compras R$ 10"})
	if e, ok := apperr.As(err); ok && e.Code == "insufficient_points" {
		sh.balance = 0 // points expired meanwhile
		return nil
	}
	sh.balance -= 1000
	return err
}
