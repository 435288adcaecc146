package eligibility

import (
	"slices"
	"strings"
)

// Applies tells whether it is an applicable item of c: its SKU or GTIN is in
// SKUs, its Category is in Categories or under one of them, or its Brand is
// in Brands; with none of the lists, every item is. Empty strings never
// match.
func (c Campaign) Applies(it Item) bool {
	m := newMatcher(&c)
	return m.applies(&it)
}

// mapThreshold is the list length above which matching builds a set.
const mapThreshold = 16

// matcher decides whether items apply to one campaign.
type matcher struct {
	all                      bool
	skus, categories, brands []string
	skuSet, catSet           map[string]struct{}
}

func newMatcher(c *Campaign) matcher {
	m := matcher{
		all:  len(c.SKUs) == 0 && len(c.Categories) == 0 && len(c.Brands) == 0,
		skus: c.SKUs, categories: c.Categories, brands: c.Brands,
	}
	if len(c.SKUs) > mapThreshold {
		m.skuSet = toSet(c.SKUs)
	}
	if len(c.Categories) > mapThreshold {
		m.catSet = toSet(c.Categories)
	}
	return m
}

func toSet(list []string) map[string]struct{} {
	s := make(map[string]struct{}, len(list))
	for _, v := range list {
		s[v] = struct{}{}
	}
	return s
}

func (m *matcher) applies(it *Item) bool {
	if m.all {
		return true
	}
	return in(it.SKU, m.skus, m.skuSet) || in(it.GTIN, m.skus, m.skuSet) || m.inCategory(it.Category) ||
		(it.Brand != "" && slices.Contains(m.brands, it.Brand))
}

// CategorySeparator separates the levels of a category path, such as
// "Bebidas > Cervejas".
const CategorySeparator = " > "

// inCategory tells whether a category (path) is one of the campaign's or
// under one of them: "Bebidas" takes "Bebidas > Cervejas".
func (m *matcher) inCategory(category string) bool {
	if category == "" || len(m.categories) == 0 {
		return false
	}
	for {
		if in(category, m.categories, m.catSet) {
			return true
		}
		i := strings.LastIndex(category, CategorySeparator)
		if i < 0 {
			return false
		}
		category = category[:i]
	}
}

func in(v string, list []string, set map[string]struct{}) bool {
	if v == "" {
		return false
	}
	if set != nil {
		_, ok := set[v]
		return ok
	}
	return slices.Contains(list, v)
}
