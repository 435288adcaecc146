package eligibility

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/points"
)

// fuzzCart decodes items from 8-byte records:
//
//	b0–b3 unit price (big-endian uint32), divided by 10^(b4 & 0x0f % 9)
//	b4    bits 4–6: SKU S0–S7; bit 7: no SKU, GTIN 789<n> instead
//	b5–b6 quantity (big-endian uint16), divided by 10^(b7 & 3)
//	b7    bits 2–3: category C0–C3; bit 7: negative quantity
func fuzzCart(data []byte) Cart {
	var cart Cart
	for len(data) >= 8 && len(cart.Items) < 64 {
		r := data[:8]
		data = data[8:]
		price := decimal.New(int64(binary.BigEndian.Uint32(r[0:4])), -int32(r[4]&0x0f%9))
		qty := decimal.New(int64(binary.BigEndian.Uint16(r[5:7])), -int32(r[7]&3))
		if r[7]&0x80 != 0 {
			qty = qty.Neg()
		}
		it := Item{Category: "C" + strconv.Itoa(int(r[7]>>2&3)), Quantity: qty, UnitPrice: price}
		if r[4]&0x80 != 0 {
			it.GTIN = "789" + strconv.Itoa(len(cart.Items))
		} else {
			it.SKU = "S" + strconv.Itoa(int(r[4]>>4&7))
		}
		cart.Items = append(cart.Items, it)
	}
	return cart
}

// fuzzCampaigns builds one campaign of every type and mode from the fuzzed
// values, all sharing the rules chosen by flags:
//
//	bit 0 MinSubtotal = minSub/100          bit 1 SKUs S1, S3, 7891
//	bit 2 Categories C0                     bit 3 Cart.Subtotal = (flags>>16)/100
//	bit 4 Channels pdv; bit 5 context pdv   bit 6 segment vip; bit 7 customer in vip
//	bit 8 LimitTotal (flags>>9)&3 with RedemptionsCount (flags>>11)&3
//	bit 13 paused; bit 14 starts in the future; bit 15 LimitPerCustomer 1
func fuzzCampaigns(flags uint32, value decimal.Decimal, minSub, multiplier int64) []Campaign {
	base := Campaign{
		Status:   Active,
		StartsAt: now.Add(-time.Hour),
		EndsAt:   now.Add(time.Hour),
	}
	if flags&1 != 0 {
		base.MinSubtotal = dp(decimal.New(minSub, -2).String())
	}
	if flags&2 != 0 {
		base.SKUs = []string{"S1", "S3", "7891"}
	}
	if flags&4 != 0 {
		base.Categories = []string{"C0"}
	}
	if flags&16 != 0 {
		base.Channels = []string{"pdv"}
	}
	if flags&64 != 0 {
		base.SegmentID = "vip"
	}
	if flags&256 != 0 {
		base.LimitTotal = ip(int(flags >> 9 & 3))
		base.RedemptionsCount = int(flags >> 11 & 3)
	}
	if flags&(1<<13) != 0 {
		base.Status = Paused
	}
	if flags&(1<<14) != 0 {
		base.StartsAt = now.Add(time.Minute)
	}
	if flags&(1<<15) != 0 {
		base.LimitPerCustomer = ip(1)
	}
	var out []Campaign
	add := func(typ Type, mode Mode) {
		c := base
		c.ID = fmt.Sprintf("%s-%s", typ, mode)
		c.Type, c.DiscountMode, c.DiscountValue = typ, mode, value
		c.CreditAfterDays = int(flags >> 16 & 0xff)
		c.Multiplier = decimal.New(multiplier, -2)
		c.GiftSKU = "GIFT"
		out = append(out, c)
	}
	for _, typ := range []Type{Discount, Cashback} {
		for _, mode := range []Mode{Percentage, FixedAmount, FreeShipping, ""} {
			add(typ, mode)
		}
	}
	add(BonusPoints, "")
	add(Gift, "")
	return out
}

func FuzzEvaluate(f *testing.F) {
	// More seeds live in testdata/fuzz/FuzzEvaluate.
	f.Add(uint32(0), int64(10), uint8(0), int64(0), int64(200), int64(100),
		[]byte("\x00\x00\x01\x4d\x02\x00\x01\x00\x00\x00\x04\xe2\x12\x02\xf3\x03"))
	f.Fuzz(func(t *testing.T, flags uint32, value int64, valueExp uint8, minSub, multiplier, rate int64, data []byte) {
		cart := fuzzCart(data)
		if flags&8 != 0 {
			cart.Subtotal = decimal.New(int64(flags>>16), -2)
		}
		campaigns := fuzzCampaigns(flags, decimal.New(value, -int32(valueExp%10)), minSub, multiplier)
		ctx := Context{Now: now, PointsPerReal: decimal.New(rate, -2), CustomerRedemptions: map[string]int{}}
		if flags&32 != 0 {
			ctx.Channel = "pdv"
		} else {
			ctx.Channel = "app"
		}
		if flags&128 != 0 {
			ctx.Segments = []string{"vip"}
		}
		for _, c := range campaigns {
			ctx.CustomerRedemptions[c.ID] = int(flags >> 20 & 1)
		}

		el, in := Evaluate(campaigns, cart, ctx)
		if el == nil || in == nil || len(el)+len(in) != len(campaigns) {
			t.Fatalf("%d eligible, %d ineligible of %d", len(el), len(in), len(campaigns))
		}
		// Both lists keep the order of campaigns.
		ei, ii := 0, 0
		for _, c := range campaigns {
			switch {
			case ei < len(el) && el[ei].Campaign.ID == c.ID:
				ei++
			case ii < len(in) && in[ii].Campaign.ID == c.ID:
				ii++
			default:
				t.Fatalf("campaign %s out of order", c.ID)
			}
		}
		for _, x := range in {
			if (x.Reason == MinSubtotalNotMet) != (x.Missing != nil) {
				t.Fatalf("%s: reason %s, missing %v", x.Campaign.ID, x.Reason, x.Missing)
			}
			if x.Missing != nil && !x.Missing.IsPositive() {
				t.Fatalf("%s: missing %s", x.Campaign.ID, x.Missing)
			}
		}
		for _, e := range el {
			if err := invariants(cart, e); err != nil {
				t.Fatalf("%s: %v", e.Campaign.ID, err)
			}
			if err := oracle(cart, e, ctx); err != nil {
				t.Fatalf("%s: %v", e.Campaign.ID, err)
			}
		}
		if err := sameAsReference(campaigns, cart, ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// wide is c × 10^exp written with w more decimal places: the same value
// with a coefficient of up to w more digits.
func wide(c int64, exp int32, w uint8) decimal.Decimal {
	n := int32(w % 25)
	return decimal.NewFromBigInt(new(big.Int).Mul(big.NewInt(c), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)), exp-n)
}

// fastPathCart decodes items from 10-byte records:
//
//	b0–b3 unit price coefficient (big-endian uint32); b4 its exponent, b4 % 33 - 20
//	b5–b7 quantity coefficient (big-endian uint24); b8 its exponent, b8 % 16 - 10
//	b9    bits 0–1 SKU S0–S3; bits 2–3 category C0–C3; bit 4 no SKU, GTIN 789<n>
//	      instead; bit 5 negative price; bit 6 negative quantity; bit 7 both
//	      written with widen more decimal places
func fastPathCart(data []byte, widen uint8) Cart {
	var cart Cart
	for len(data) >= 10 && len(cart.Items) < 40 {
		r := data[:10]
		data = data[10:]
		price, qty := int64(binary.BigEndian.Uint32(r[0:4])), int64(r[5])<<16|int64(r[6])<<8|int64(r[7])
		if r[9]&0x20 != 0 {
			price = -price
		}
		if r[9]&0x40 != 0 {
			qty = -qty
		}
		w := uint8(0)
		if r[9]&0x80 != 0 {
			w = widen
		}
		it := Item{
			Category:  "C" + strconv.Itoa(int(r[9]>>2&3)),
			UnitPrice: wide(price, int32(r[4]%33)-20, w),
			Quantity:  wide(qty, int32(r[8]%16)-10, w),
		}
		if r[9]&0x10 != 0 {
			it.GTIN = "789" + strconv.Itoa(len(cart.Items))
		} else {
			it.SKU = "S" + strconv.Itoa(int(r[9]&3))
		}
		cart.Items = append(cart.Items, it)
	}
	return cart
}

// FuzzEvaluateFastPath checks that Evaluate and Estimate give exactly what
// the decimal arithmetic they replaced gives, for amounts of every size and
// scale: from far below a unit to far beyond the fixed-point range, with
// more decimal places than they need, negative and zero.
func FuzzEvaluateFastPath(f *testing.F) {
	// A point-of-sale cart: 12.99 × 2, 5.49 × 1, 0.755 kg × 39.90.
	f.Add(int64(1000000000), int8(-8), int64(100000000), int8(-8), int64(200), uint8(0), int64(0),
		[]byte("\x00\x00\x05\x13\x12\x00\x00\x02\x0a\x00"+
			"\x00\x00\x02\x25\x12\x00\x00\x01\x0a\x05"+
			"\x00\x00\x0f\x96\x12\x00\x02\xf3\x07\x1a"))
	f.Fuzz(func(t *testing.T, value int64, valueExp int8, rate int64, rateExp int8, multiplier int64, widen uint8, subtotal int64, data []byte) {
		cart := fastPathCart(data, widen)
		if subtotal != 0 {
			cart.Subtotal = decimal.New(subtotal, -2)
		}
		v := wide(value, int32(valueExp)%25, widen)
		ctx := Context{Now: now, Channel: "pdv", PointsPerReal: wide(rate, int32(rateExp)%13, widen)}
		var campaigns []Campaign
		add := func(c Campaign) {
			c.ID = strconv.Itoa(len(campaigns))
			campaigns = append(campaigns, running(c))
		}
		for _, filter := range []bool{false, true} {
			for _, typ := range []Type{Discount, Cashback} {
				for _, mode := range []Mode{Percentage, FixedAmount, FreeShipping, ""} {
					c := Campaign{Type: typ, DiscountMode: mode, DiscountValue: v, CreditAfterDays: 3}
					if filter {
						c.SKUs, c.Categories = []string{"S1", "7891"}, []string{"C2"}
					}
					add(c)
				}
			}
			c := Campaign{Type: BonusPoints, Multiplier: wide(multiplier, -2, widen)}
			if filter {
				c.SKUs = []string{"S0", "7890"}
			}
			add(c)
		}
		add(Campaign{Type: Gift, GiftSKU: "G", MinSubtotal: &v})
		if err := sameAsReference(campaigns, cart, ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// oracle recomputes the benefit from the rules written plainly.
func oracle(cart Cart, e Eligible, ctx Context) error {
	c, b := e.Campaign, e.Benefit
	n := int64(len(e.ApplicableItems))
	total := decimal.Zero
	for _, i := range e.ApplicableItems {
		it := cart.Items[i]
		total = total.Add(it.UnitPrice.Mul(it.Quantity).Round(8))
	}
	money := func(ib ItemBenefit) decimal.Decimal {
		if c.Type == Cashback {
			return ib.CashbackAmount
		}
		return ib.DiscountAmount
	}
	switch {
	case (c.Type == Discount || c.Type == Cashback) && c.DiscountMode == Percentage:
		pct := decimal.Min(decimal.Max(c.DiscountValue, decimal.Zero), decimal.NewFromInt(100))
		for _, ib := range b.Items {
			it := cart.Items[ib.Index]
			want := it.UnitPrice.Mul(it.Quantity).Round(8).Mul(pct).DivRound(decimal.NewFromInt(100), 8)
			if !money(ib).Equal(want) {
				return fmt.Errorf("item %d: %s, want %s", ib.Index, money(ib), want)
			}
		}
	case (c.Type == Discount || c.Type == Cashback) && c.DiscountMode == FixedAmount:
		want := decimal.Max(decimal.Zero, decimal.Min(c.DiscountValue, total)).Round(8)
		if !b.Amount.Equal(want) {
			return fmt.Errorf("amount %s, want min(%s, %s)", b.Amount, c.DiscountValue, total)
		}
		// Every share is within the accumulated rounding of its exact share.
		tolerance := decimal.New(n, -8)
		for _, ib := range b.Items {
			it := cart.Items[ib.Index]
			exact := want.Mul(it.UnitPrice.Mul(it.Quantity).Round(8)).DivRound(total, 20)
			if money(ib).Sub(exact).Abs().GreaterThan(tolerance) {
				return fmt.Errorf("item %d: %s, exact share %s", ib.Index, money(ib), exact)
			}
		}
	case c.Type == Discount || c.Type == Cashback:
		if !b.Amount.IsZero() {
			return fmt.Errorf("mode %q gives %s", c.DiscountMode, b.Amount)
		}
	case c.Type == BonusPoints:
		rate := ctx.PointsPerReal.Mul(c.Multiplier.Sub(decimal.NewFromInt(1)))
		for _, ib := range b.Items {
			it := cart.Items[ib.Index]
			line := it.UnitPrice.Mul(it.Quantity).Round(8)
			if exact := line.Mul(rate).Floor(); exact.LessThan(decimal.NewFromInt(1 << 62)) {
				if want := points.Earned(line, rate); ib.BonusPoints != want && rate.IsPositive() {
					return fmt.Errorf("item %d: %d points, want %d", ib.Index, ib.BonusPoints, want)
				}
			}
		}
	}
	return nil
}

// BenchmarkEvaluate evaluates 200 active campaigns of mixed types and rules
// against a 30-item cart.
func BenchmarkEvaluate(b *testing.B) {
	var cart Cart
	for i := range 30 {
		it := Item{
			Category:  "C" + strconv.Itoa(i%6),
			Quantity:  decimal.NewFromInt(int64(1 + i%4)),
			UnitPrice: decimal.New(int64(199+i*137), -2),
		}
		if i%3 == 0 {
			it.Quantity = decimal.New(int64(250+i*7), -3) // kg
		}
		if i%5 == 0 {
			it.GTIN = "789100010" + strconv.Itoa(1000+i)
		} else {
			it.SKU = "SKU-" + strconv.Itoa(i)
		}
		cart.Items = append(cart.Items, it)
	}
	longList := make([]string, 0, 40)
	for i := range 40 {
		longList = append(longList, "SKU-"+strconv.Itoa(i*2))
	}
	ctx := Context{
		Now:                 now,
		Channel:             "pdv",
		Segments:            []string{"seg-1", "seg-3"},
		CustomerRedemptions: map[string]int{"c-7": 1, "c-15": 3},
		PointsPerReal:       decimal.NewFromInt(1),
	}
	campaigns := make([]Campaign, 0, 200)
	for i := range 200 {
		v := variants()[i%len(variants())]
		v.ID = "c-" + strconv.Itoa(i)
		v = running(v)
		switch i % 10 {
		case 1:
			v.Channels = []string{"ecommerce", "pdv"}
		case 2:
			v.Channels = []string{"app"} // channel_mismatch
		case 3:
			v.SegmentID = "seg-" + strconv.Itoa(i%5)
		case 4:
			v.SKUs = []string{"SKU-1", "SKU-4", "SKU-7", "789100010" + strconv.Itoa(1010)}
		case 5:
			v.Categories = []string{"C1", "C4"}
		case 6:
			v.SKUs = longList
		case 7:
			v.LimitTotal, v.LimitPerCustomer, v.RedemptionsCount = ip(1000), ip(2), i
		case 8:
			v.MinSubtotal = dp(strconv.Itoa(100 + i*2))
		case 9:
			v.SKUs = []string{"NONE"}
			v.Categories = []string{"C5"}
		}
		campaigns = append(campaigns, v)
	}
	benchmarkEvaluate(b, campaigns, cart, ctx)
}

// BenchmarkEvaluatePOSCart is a point-of-sale authorization: 50 live discount
// campaigns, read from the database with 8 decimal places, against a 20-item
// cart of 2-place prices and whole quantities.
func BenchmarkEvaluatePOSCart(b *testing.B) {
	var cart Cart
	for i := range 20 {
		gtin := "78910001" + strconv.Itoa(10000+i)
		cart.Items = append(cart.Items, Item{
			SKU: gtin, GTIN: gtin, Category: "C" + strconv.Itoa(i%5),
			Quantity:  decimal.NewFromInt(int64(1 + i%3)),
			UnitPrice: decimal.New(int64(149+i*373%4000), -2),
		})
	}
	ctx := Context{
		Now: now, Channel: "pdv", Segments: []string{"seg-gold"},
		CustomerRedemptions: map[string]int{"c-8": 1}, PointsPerReal: stored("1"),
	}
	campaigns := make([]Campaign, 50)
	for i := range campaigns {
		c := running(Campaign{ID: "c-" + strconv.Itoa(i), Type: Discount})
		if i%2 == 0 {
			c.DiscountMode, c.DiscountValue = Percentage, stored(strconv.Itoa(5+i%4*5))
		} else {
			c.DiscountMode, c.DiscountValue = FixedAmount, stored(strconv.Itoa(2+i%7)+".50")
		}
		switch i % 10 {
		case 1, 6:
			c.SKUs = []string{cart.Items[i%20].GTIN, cart.Items[(i+7)%20].GTIN, "7890000000000"}
		case 2:
			c.Categories = []string{"C1", "C3"}
		case 3:
			c.MinSubtotal = new(stored("100")) // met
		case 4:
			c.MinSubtotal = new(stored("5000")) // not met
		case 5:
			c.SegmentID = "seg-gold"
		case 7:
			c.SegmentID = "seg-silver" // segment_mismatch
		case 8:
			c.LimitPerCustomer = ip(1) // limit_reached
		}
		campaigns[i] = c
	}
	benchmarkEvaluate(b, campaigns, cart, ctx)
}

// benchmarkEvaluate evaluates cart against campaigns compiled once, as the
// hot paths keep them ("index"), and compiled on each call ("compile").
func benchmarkEvaluate(b *testing.B, campaigns []Campaign, cart Cart, ctx Context) {
	b.Run("index", func(b *testing.B) {
		x := Compile(campaigns)
		var el []Eligible
		b.ReportAllocs()
		for b.Loop() {
			el, _ = x.Evaluate(cart, ctx)
		}
		b.ReportMetric(float64(len(el)), "eligible/op")
	})
	b.Run("compile", func(b *testing.B) {
		var el []Eligible
		b.ReportAllocs()
		for b.Loop() {
			el, _ = Evaluate(campaigns, cart, ctx)
		}
		b.ReportMetric(float64(len(el)), "eligible/op")
	})
}
