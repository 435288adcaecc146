package demoyear

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/domain/experiment"
)

// The year's experiment: a club giving 5% off in the stores over the last
// demoClubDays, holding out demoClubHoldout of the customers. The customers
// it treats get its discount at the till and come demoClubBoost more often
// (store visits a year, over its days); the held-out ones shop as usual.
const (
	demoClubName    = "Clube nas lojas: 5% com grupo de controle"
	demoClubDays    = 90
	demoClubHoldout = 1000 // basis points: 10%
	demoClubBoost   = 0.3
)

// demoClub is the experiment's campaign.
type demoClub struct {
	id     string
	starts time.Time
}

// treats says the shopper, registered, is on the club's treated side.
func (c *demoClub) treats(sh *demoShopper) bool {
	return sh.id != "" && !experiment.HeldOut(sh.id, c.id, demoClubHoldout)
}

// demoClubDiscount asks the point of sale's authorize for the sale's
// discounts while the club runs, as a till does for an identified customer,
// and applies what it gives (nothing to the held-out customers).
func (a *year) demoClubDiscount(ctx context.Context, club *demoClub, sl *demoSale) error {
	if sl.at.Before(club.starts) {
		return nil
	}
	items := make([]pos.POSItem, len(sl.in.Items))
	for i, it := range sl.in.Items {
		items[i] = pos.POSItem{ID: it.ID, GTIN: it.GTIN, UnitMeasure: "UN", UnitPrice: it.UnitPrice, Quantity: it.Quantity}
	}
	auth, err := a.POS.AuthorizeDiscounts(ctx, pos.AuthorizeInput{SessionID: "demo-" + sl.in.SaleID, Protocol: "PARTNER",
		Customer: sl.in.Customer, StoreID: sl.in.StoreID, Date: sl.in.Date, Items: items})
	if err != nil {
		return fmt.Errorf("demo authorize: %w", err)
	}
	if auth.Applied == 0 {
		return nil
	}
	off := decimal.Zero
	for i, it := range auth.Items {
		sl.in.Items[i].Discounts = it.Discounts
		for _, d := range it.Discounts {
			off = off.Add(d.UnitDiscount.Mul(*d.Quantity))
		}
	}
	payable := sl.in.Amount.Sub(off)
	sl.in.DiscountAmount, sl.in.AmountPayable = &off, &payable
	sl.in.Payments[0].Amount = &payable
	return nil
}

// demoCalendar is the cumulative weight of the year's days, a retailer's
// calendar: Saturdays busiest, Sundays quiet, December and Black Friday
// week strong. cal[d] sums the weights of the days before d.
type demoCalendar []float64

func newDemoCalendar(first time.Time, days int) demoCalendar {
	cal := make(demoCalendar, days+1)
	for d := range days {
		day := first.AddDate(0, 0, d)
		w := 1.0
		if wd := day.Weekday(); wd == time.Saturday {
			w = 1.6
		} else if wd == time.Sunday {
			w = 0.6
		}
		if day.Month() == time.December {
			w *= 1.5
		}
		if day.Month() == time.November && day.Day() >= 22 {
			w *= 2
		}
		cal[d+1] = cal[d] + w
	}
	return cal
}

// day draws a day in [from, to) by the calendar's weights with one uniform
// draw (the inverse of the distribution); from when the range is empty.
func (cal demoCalendar) day(rng *rand.Rand, from, to int) int {
	u := rng.Float64()
	if to <= from {
		return from
	}
	target := cal[from] + u*(cal[to]-cal[from])
	return from + min(sort.Search(to-from, func(k int) bool { return cal[from+k+1] > target }), to-from-1)
}
