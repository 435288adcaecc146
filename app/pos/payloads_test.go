package pos

import (
	"encoding/json"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

// TestStoredPayloadsRoundTrip: what is stored as JSON is read back equal,
// under the JSON names fixed by tags, and rows written before the tags
// existed still read. Renaming a Go field cannot break reading them.
func TestStoredPayloadsRoundTrip(t *testing.T) {
	id, partner := "cmp_1", "P-9"
	unit, after, qty := decimal.RequireFromString("1.25"), decimal.RequireFromString("8.75"), decimal.RequireFromString("2.5")
	discounts := []POSDiscount{
		{PromotionID: &id, PartnerPromotionID: &partner, UnitDiscount: &unit, UnitPriceWithDiscount: &after, Quantity: &qty},
		{},
	}
	cases := []struct {
		name   string
		value  any
		fields []string // the JSON names rows carry
		read   func([]byte) (any, error)
	}{
		{"sale item discounts", discounts, []string{"PromotionID", "PartnerPromotionID", "UnitDiscount", "UnitPriceWithDiscount", "Quantity"},
			func(b []byte) (any, error) { return storedDiscounts(b) }},
		{"sale redemption benefit", saleRedemptionBenefit{Amount: unit, DiscountAmount: unit}, []string{"amount", "discount_amount"},
			func(b []byte) (any, error) {
				var v saleRedemptionBenefit
				return v, json.Unmarshal(b, &v)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw, err := json.Marshal(c.value)
			require.NoError(t, err)
			for _, f := range c.fields {
				require.Contains(t, string(raw), `"`+f+`":`, "stored JSON names are fixed")
			}
			back, err := c.read(raw)
			require.NoError(t, err)
			require.Equal(t, normalize(t, c.value), normalize(t, back))
		})
	}
	// A row as stored before the tags: Go's names, decimals as strings.
	old := `[{"PromotionID":"cmp_1","PartnerPromotionID":null,"UnitDiscount":"1.25","UnitPriceWithDiscount":null,"Quantity":"2"}]`
	ds, err := storedDiscounts([]byte(old))
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, "cmp_1", *ds[0].PromotionID)
	require.True(t, ds[0].UnitDiscount.Mul(*ds[0].Quantity).Equal(decimal.RequireFromString("2.5")))
	require.False(t, ds[0].external())
}

// normalize compares payloads by their JSON (decimals compare by value).
func normalize(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
