package demoyear

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/points"
)

// demoBasket draws a purchase of about ticket reais.
func demoBasket(rng *rand.Rand, ticket float64) (items []pos.SaleItemInput, total decimal.Decimal) {
	target := decimal.NewFromFloat(ticket * (0.5 + rng.Float64())).Round(2)
	total = decimal.Zero
	for line := 1; line <= 20 && (line == 1 || total.LessThan(target)); line++ {
		p := demoProducts[rng.IntN(len(demoProducts))]
		price := decimal.New(p.price, -2)
		qty := decimal.NewFromInt(1 + rng.Int64N(3))
		items = append(items, pos.SaleItemInput{ID: strconv.Itoa(line), GTIN: p.gtin, Description: p.name,
			UnitPrice: &price, Quantity: &qty})
		total = total.Add(price.Mul(qty))
	}
	return items, total
}

// demoSale is a store sale of the day, and its id once registered.
type demoSale struct {
	in               pos.SaleInput
	at               time.Time
	shopper, receipt int
	id               string
	rng              *rand.Rand // its purchase's draws, for what follows it (a return, points spent)
}

// demoNewSale draws a purchase at the shopper's store (now and then
// another one).
func demoNewSale(rng *rand.Rand, e demoEvent, sh *demoShopper, receipt int) demoSale {
	items, total := demoBasket(rng, sh.ticket)
	store := app.DemoStores[sh.store].Code
	if rng.IntN(6) == 0 {
		store = app.DemoStores[rng.IntN(len(app.DemoStores))].Code
	}
	at := e.at
	return demoSale{at: e.at, shopper: e.shopper, receipt: receipt, rng: rng, in: pos.SaleInput{
		Protocol: protocolSale, Customer: &pos.POSCustomer{ID: sh.cpf, Type: "CPF"},
		SaleID: strconv.Itoa(receipt), StoreID: store, PosID: "PDV-" + strconv.Itoa(1+rng.IntN(4)), Channel: "LOJA",
		Date: &at, Amount: &total, AmountPayable: &total, Items: items,
		Payments: []pos.SalePaymentInput{{ID: "1", Amount: &total, Method: []string{"PIX", "CREDIT", "DEBIT", "CASH"}[rng.IntN(4)]}},
	}}
}

// Points paid at the till: a customer with points to spare now and then
// pays R$ 5 to R$ 20 of a purchase (at most half) with them.
const (
	demoTillMinPoints = 500  // the programme's fewest points spent at once (R$ 5)
	demoTillReserve   = 1500 // points kept for the vouchers (demoSpend)
)

// demoPayWithPoints has the shopper pay part of the sale with points now
// and then, as a till does: a hold asked for at the sale's minute, the sale
// registered at once with a POINTS payment of the hold's amount (a hold
// lasts 15 minutes, the day's other sales are sent at closing time). The
// draws are till's, not the year's.
func (a *year) demoPayWithPoints(ctx context.Context, till *rand.Rand, sh *demoShopper, sl *demoSale) error {
	spare := sh.balance - sh.tillSpent - demoTillReserve
	total := *sl.in.AmountPayable
	reais := min(spare/100, 20, total.Div(decimal.NewFromInt(2)).IntPart())
	if sh.id == "" || reais*100 < demoTillMinPoints || till.IntN(3) != 0 {
		return nil
	}
	reais -= till.Int64N(reais - demoTillMinPoints/100 + 1)
	amount := decimal.NewFromInt(reais)
	hold, _, err := a.POS.HoldPoints(ctx, pos.PointsHoldInput{SessionID: "demo-" + sl.in.SaleID, Customer: sl.in.Customer,
		StoreID: sl.in.StoreID, Amount: &amount, SaleAmount: &total})
	if e, ok := apperr.As(err); ok && e.Code == "insufficient_points" {
		return nil // points expired or taken back meanwhile
	}
	if err != nil {
		return fmt.Errorf("demo points hold: %w", err)
	}
	rest := total.Sub(amount)
	sl.in.Payments = []pos.SalePaymentInput{{ID: "1", Amount: &amount, Method: pos.MethodPoints, HoldID: hold.ID},
		{ID: "2", Amount: &rest, Method: sl.in.Payments[0].Method}}
	s, err := a.POS.RegisterSale(ctx, sl.in)
	if err != nil {
		return fmt.Errorf("demo sale paid with points: %w", err)
	}
	sl.id = s.ID
	one := decimal.NewFromInt(1)
	sh.tillSpent += hold.Points + points.Earned(total, one) - points.Earned(rest, one)
	return nil
}

// demoSales registers the day's store sales at once, so that they commit
// in a few groups, then processes them in one transaction as the worker
// does each.
func (a *year) demoSales(ctx context.Context, sales []demoSale) error {
	errs := make([]error, len(sales))
	var wg sync.WaitGroup
	for i := range sales {
		if sales[i].id != "" { // paid with points: registered at the till
			continue
		}
		wg.Go(func() {
			s, err := a.POS.RegisterSale(ctx, sales[i].in)
			if err == nil {
				sales[i].id = s.ID
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("demo sales: %w", err)
	}
	ids := make([]string, len(sales))
	for i, sl := range sales {
		ids[i] = sl.id
	}
	if err := a.POS.ProcessSales(ctx, ids...); err != nil {
		return fmt.Errorf("demo sales: %w", err)
	}
	return nil
}
