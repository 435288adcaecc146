package pos

import (
	"strconv"
	"testing"

	"github.com/fideliza/fideliza/app/kernel"

	"github.com/shopspring/decimal"
)

// BenchmarkGuardPOSCart is the input guard of authorize on the load tool's
// cart (20 items, each with a discount), which every request pays.
func BenchmarkGuardPOSCart(b *testing.B) {
	price, qty := decimal.RequireFromString("19.90"), decimal.NewFromInt(2)
	promotion := "1"
	in := AuthorizeInput{SessionID: "s-1", Protocol: "1.0", StoreID: "0001",
		Customer: &POSCustomer{ID: "52998224725", Type: "CPF"}}
	for i := range 20 {
		in.Items = append(in.Items, POSItem{
			ID: strconv.Itoa(i + 1), GTIN: "789" + strconv.Itoa(1000000000+i), UnitMeasure: "UN",
			UnitPrice: &price, Quantity: &qty,
			Discounts: []POSDiscount{{PromotionID: &promotion, UnitDiscount: &price, Quantity: &qty}},
		})
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := kernel.GuardedPOS("", in); err != nil {
			b.Fatal(err)
		}
	}
}
