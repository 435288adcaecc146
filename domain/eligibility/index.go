package eligibility

import "strings"

// Index is campaigns compiled once for the evaluation of many carts: which
// campaigns an item can match, by its SKU or GTIN, its category (or a
// category above it) and its brand, besides the campaigns for every item.
// An evaluation looks up each item's campaigns instead of matching every
// campaign against every item. A process keeps one per tenant and compiles
// it again when the tenant's campaigns change.
type Index struct {
	campaigns []Campaign
	// every lists the campaigns for every item (no SKU, category or brand);
	// the maps, the campaigns naming a SKU or GTIN, a category, a brand.
	// Each list is in campaign order, without repeats.
	every                      []int
	bySKU, byCategory, byBrand map[string][]int
}

// Compile indexes campaigns. The index keeps the slice: it must not change
// afterwards.
func Compile(campaigns []Campaign) *Index {
	x := &Index{campaigns: campaigns, bySKU: map[string][]int{}, byCategory: map[string][]int{}, byBrand: map[string][]int{}}
	add := func(m map[string][]int, keys []string, i int) {
		for _, k := range keys {
			// Empty strings never match; a key listed twice is one entry.
			if l := m[k]; k != "" && (len(l) == 0 || l[len(l)-1] != i) {
				m[k] = append(l, i)
			}
		}
	}
	for i := range campaigns {
		c := &campaigns[i]
		if len(c.SKUs) == 0 && len(c.Categories) == 0 && len(c.Brands) == 0 {
			x.every = append(x.every, i)
			continue
		}
		add(x.bySKU, c.SKUs, i)
		add(x.byCategory, c.Categories, i)
		add(x.byBrand, c.Brands, i)
	}
	return x
}

// Campaigns are the campaigns compiled, in their order.
func (x *Index) Campaigns() []Campaign { return x.campaigns }

// With is the index over campaigns instead: the compiled ones, in the same
// order, differing only in what the index does not look at (redemption
// counts, budgets' spending). Compiling again is not needed for those.
func (x *Index) With(campaigns []Campaign) *Index {
	if len(campaigns) != len(x.campaigns) {
		panic("eligibility: Index.With of other campaigns")
	}
	y := *x
	y.campaigns = campaigns
	return &y
}

// applicable is, per campaign, the indexes of the items that apply to it
// and have a positive line total, in cart order: slices of one array.
func (x *Index) applicable(lines *cartLines) [][]int {
	counts := make([]int, len(x.campaigns))
	x.matches(lines, func(c, _ int) { counts[c]++ })
	total := 0
	for _, n := range counts {
		total += n
	}
	items := make([]int, total)
	out := make([][]int, len(x.campaigns))
	at := 0
	for c, n := range counts {
		out[c] = items[at : at : at+n]
		at += n
	}
	x.matches(lines, func(c, i int) { out[c] = append(out[c], i) })
	return out
}

// matches calls found with each campaign and each item of positive line
// total that applies to it, once, item after item.
func (x *Index) matches(lines *cartLines, found func(campaign, item int)) {
	last := make([]int, len(x.campaigns)) // 1 + the last item found for each campaign
	mark := func(campaigns []int, item int) {
		for _, c := range campaigns {
			if last[c] != item+1 {
				last[c] = item + 1
				found(c, item)
			}
		}
	}
	for i := range lines.items {
		if !lines.positive(i) {
			continue
		}
		it := &lines.items[i]
		mark(x.every, i)
		if it.SKU != "" {
			mark(x.bySKU[it.SKU], i)
		}
		if it.GTIN != "" {
			mark(x.bySKU[it.GTIN], i)
		}
		for category := it.Category; category != ""; {
			mark(x.byCategory[category], i)
			cut := strings.LastIndex(category, CategorySeparator)
			if cut < 0 {
				break
			}
			category = category[:cut]
		}
		if it.Brand != "" {
			mark(x.byBrand[it.Brand], i)
		}
	}
}
