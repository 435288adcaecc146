package eligibility

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestApplies(t *testing.T) {
	t.Parallel()
	many := make([]string, 0, 50)
	for i := range 50 {
		many = append(many, "SKU-"+strconv.Itoa(i))
	}
	cases := []struct {
		name       string
		skus, cats []string
		it         Item
		want       bool
		brands     []string
	}{
		{"brand listed", nil, nil, Item{SKU: "A", Brand: "Ypê"}, true, []string{"Omo", "Ypê"}},
		{"brand not listed", nil, nil, Item{SKU: "A", Brand: "Omo"}, false, []string{"Ypê"}},
		{"brand is case-sensitive", nil, nil, Item{SKU: "A", Brand: "ypê"}, false, []string{"Ypê"}},
		{"no brand never matches", nil, nil, Item{SKU: "A"}, false, []string{""}},
		{"brand or category", nil, []string{"Limpeza"}, Item{SKU: "A", Category: "Limpeza", Brand: "Omo"}, true, []string{"Ypê"}},
		{"category path under a listed category", nil, []string{"Bebidas"}, Item{SKU: "A", Category: "Bebidas > Cervejas > Lata"}, true, nil},
		{"category path, middle level listed", nil, []string{"Bebidas > Cervejas"}, Item{SKU: "A", Category: "Bebidas > Cervejas > Lata"}, true, nil},
		{"category path, deeper level listed", nil, []string{"Bebidas > Cervejas"}, Item{SKU: "A", Category: "Bebidas"}, false, nil},
		{"category prefix of a word is not a level", nil, []string{"Bebida"}, Item{SKU: "A", Category: "Bebidas > Cervejas"}, false, nil},
		{"long category list, path", nil, append([]string{"Bebidas"}, many...), Item{Category: "Bebidas > Sucos"}, true, nil},
		{"no lists: every item", nil, nil, Item{SKU: "A"}, true, nil},
		{"no lists: item without ids", nil, nil, Item{}, true, nil},
		{"sku listed", []string{"A", "B"}, nil, Item{SKU: "B"}, true, nil},
		{"sku not listed", []string{"A"}, nil, Item{SKU: "B", Category: "x"}, false, nil},
		{"gtin in skus, no sku", []string{"789"}, nil, Item{GTIN: "789"}, true, nil},
		{"gtin in skus, other sku", []string{"789"}, nil, Item{SKU: "A", GTIN: "789"}, true, nil},
		{"category listed", nil, []string{"bebidas"}, Item{SKU: "A", Category: "bebidas"}, true, nil},
		{"category not listed", nil, []string{"bebidas"}, Item{SKU: "A", Category: "limpeza"}, false, nil},
		{"sku list only, category ignored", []string{"A"}, nil, Item{SKU: "B", Category: "A"}, false, nil},
		{"category list only, sku ignored", nil, []string{"A"}, Item{SKU: "A", Category: "B"}, false, nil},
		{"either list", []string{"A"}, []string{"bebidas"}, Item{SKU: "B", Category: "bebidas"}, true, nil},
		{"empty sku never matches", []string{""}, nil, Item{}, false, nil},
		{"empty category never matches", nil, []string{""}, Item{SKU: "A"}, false, nil},
		{"case-sensitive", []string{"abc"}, nil, Item{SKU: "ABC"}, false, nil},
		{"long list hit", many, nil, Item{SKU: "SKU-42"}, true, nil},
		{"long list gtin hit", many, nil, Item{SKU: "X", GTIN: "SKU-7"}, true, nil},
		{"long list miss", many, many, Item{SKU: "SKU-50", Category: "c"}, false, nil},
		{"long category list hit", nil, many, Item{Category: "SKU-49"}, true, nil},
		{"long list empty sku", append([]string{""}, many...), nil, Item{}, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := Campaign{SKUs: tc.skus, Categories: tc.cats, Brands: tc.brands}
			require.Equal(t, tc.want, c.Applies(tc.it))
			// Evaluate agrees with Applies.
			c = running(Campaign{Type: Gift, SKUs: tc.skus, Categories: tc.cats, Brands: tc.brands})
			tc.it.Quantity, tc.it.UnitPrice = d("1"), d("1")
			el, _ := Evaluate([]Campaign{c}, Cart{Items: []Item{tc.it}}, Context{Now: now})
			require.Equal(t, tc.want, len(el) == 1)
		})
	}
}
