package eligibility

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// indexCampaigns are campaigns of every matching rule the index looks up,
// and of the rules before matching, each type in turn.
func indexCampaigns() []Campaign {
	rules := []func(c *Campaign){
		func(c *Campaign) {}, // every item
		func(c *Campaign) { c.SKUs = []string{"A"} },
		func(c *Campaign) { c.SKUs = []string{"7891000100103", "A", "A"} }, // a GTIN, a SKU listed twice
		func(c *Campaign) { c.SKUs = []string{""} },                        // never matches
		func(c *Campaign) { c.Categories = []string{"Bebidas"} },           // and the categories under it
		func(c *Campaign) { c.Categories = []string{"Bebidas > Cervejas", "Mercearia"} },
		func(c *Campaign) { c.Categories = []string{"Cervejas"} }, // a level, not a path: no match under Bebidas
		func(c *Campaign) { c.Brands = []string{"Marca-1", ""} },
		func(c *Campaign) {
			c.SKUs, c.Categories, c.Brands = []string{"B"}, []string{"Bebidas"}, []string{"Marca-2"}
		},
		func(c *Campaign) { c.SKUs = []string{"NONE"} },
		func(c *Campaign) { c.SKUs = longSKUs() }, // above the matcher's set threshold
		func(c *Campaign) { c.Categories, c.MinSubtotal = []string{"Mercearia"}, dp("30") },
		func(c *Campaign) { c.Brands, c.Channels = []string{"Marca-1"}, []string{"app"} },            // channel_mismatch first
		func(c *Campaign) { c.SKUs, c.SegmentID = []string{"A"}, "seg-other" },                       // segment_mismatch
		func(c *Campaign) { c.SKUs, c.LimitTotal, c.RedemptionsCount = []string{"B"}, ip(3), 3 },     // limit_reached
		func(c *Campaign) { c.Stores, c.StoreGroups = []string{"LOJA-9"}, []string{"SP"} },           // by its group
		func(c *Campaign) { c.Stores, c.Categories = []string{"LOJA-9"}, []string{"Limpeza"} },       // store_mismatch
		func(c *Campaign) { c.Categories, c.MinSubtotal = []string{"Bebidas > Vinhos"}, dp("1000") }, // no item first
	}
	var list []Campaign
	for i, rule := range rules {
		c := variants()[i%len(variants())]
		c.ID = "c-" + strconv.Itoa(i)
		c = running(c)
		rule(&c)
		list = append(list, c)
	}
	return list
}

func longSKUs() []string {
	list := []string{"C"}
	for i := range 20 {
		list = append(list, "X-"+strconv.Itoa(i))
	}
	return list
}

// TestIndexMatchesFullEvaluation evaluates carts against campaigns compiled
// once, as the hot paths keep them, and requires exactly what the full
// evaluation (every campaign matched against every item) gives.
func TestIndexMatchesFullEvaluation(t *testing.T) {
	campaigns := indexCampaigns()
	x := Compile(campaigns)
	carts := []struct {
		name  string
		items []Item
	}{
		{"one item of every campaign", []Item{item("A", "Bebidas", "1", "10.00")}},
		{"SKU and GTIN the same", []Item{{SKU: "7891000100103", GTIN: "7891000100103", Quantity: d("2"), UnitPrice: d("4.99")}}},
		{"GTIN only", []Item{gtinItem("7891000100103", "Mercearia", "1", "5.50")}},
		{"a category path", []Item{item("Z", "Bebidas > Cervejas > Lager", "6", "3.49")}},
		{"a level alone", []Item{item("Z", "Cervejas", "1", "3.49")}},
		{"a brand", []Item{{SKU: "Q", Brand: "Marca-1", Quantity: d("1"), UnitPrice: d("12")}}},
		{"a brand and a category of one campaign", []Item{{SKU: "B", Category: "Bebidas", Brand: "Marca-2", Quantity: d("1"), UnitPrice: d("8")}}},
		{"a SKU of a long list", []Item{item("X-17", "", "0.350", "42.90")}},
		{"nothing any campaign names", []Item{item("ZZ", "Limpeza", "1", "9.90")}},
		{"a zero price", []Item{item("A", "Bebidas", "1", "0"), item("B", "Mercearia", "2", "3.00")}},
		{"a mixed cart", []Item{
			item("A", "Bebidas > Cervejas", "2", "10.00"),
			gtinItem("7891000100103", "Mercearia", "1", "5.50"),
			{SKU: "C", Brand: "Marca-1", Quantity: d("1.5"), UnitPrice: d("19.99")},
			item("A", "Bebidas", "1", "10.00"), // A again
			item("X-3", "Bebidas > Vinhos", "1", "89.00"),
			item("Z", "", "3", "0.01"),
		}},
		{"empty strings", []Item{{Quantity: d("1"), UnitPrice: d("5")}}},
	}
	contexts := map[string]Context{
		"pdv at LOJA-9 in SP": {Now: now, Channel: "pdv", Store: "LOJA-9", StoreGroups: []string{"SP"}, PointsPerReal: d("1")},
		"app, no store":       {Now: now, Channel: "app", Segments: []string{"seg-other"}, PointsPerReal: d("2")},
	}
	for _, cart := range carts {
		for name, ctx := range contexts {
			t.Run(cart.name+"/"+name, func(t *testing.T) {
				c := Cart{Items: cart.items}
				wantEl, wantIn := referenceEvaluate(campaigns, c, ctx)
				gotEl, gotIn := x.Evaluate(c, ctx)
				require.Equal(t, dumpResults(wantEl, wantIn), dumpResults(gotEl, gotIn))
				require.Len(t, append(gotEl, Eligible{}), len(wantEl)+1) // and nothing more
				// Evaluate (compiling for one cart) gives the same.
				el, in := Evaluate(campaigns, c, ctx)
				require.Equal(t, gotEl, el)
				require.Equal(t, gotIn, in)
			})
		}
	}
}

// TestIndexWith evaluates the compiled campaigns with other counters: a
// campaign at its total limit is ineligible without compiling again.
func TestIndexWith(t *testing.T) {
	campaigns := indexCampaigns()
	x := Compile(campaigns)
	cart := Cart{Items: []Item{item("A", "Bebidas", "2", "10.00")}}
	ctx := Context{Now: now, Channel: "pdv"}
	el, _ := x.Evaluate(cart, ctx)
	require.Equal(t, "c-1", el[1].Campaign.ID)
	counted := append([]Campaign(nil), campaigns...)
	counted[1].LimitTotal, counted[1].RedemptionsCount = ip(1), 1
	wantEl, wantIn := referenceEvaluate(counted, cart, ctx)
	gotEl, gotIn := x.With(counted).Evaluate(cart, ctx)
	require.Equal(t, dumpResults(wantEl, wantIn), dumpResults(gotEl, gotIn))
	require.NotEqual(t, "c-1", gotEl[1].Campaign.ID)
	require.Panics(t, func() { x.With(counted[1:]) })
}
