package campaigns

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fideliza/fideliza/app/kernel"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/product"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// MaxProductsAtOnce bounds the products one import call takes; the CLI
// sends a file in calls of this size.
const MaxProductsAtOnce = 5000

// ProductInput is a product of the catalogue, found again by GTIN, else by
// SKU.
type ProductInput struct {
	GTIN, SKU, Name, Category, Brand string
}

// ProductProblem is why the product at Index of an import was skipped.
type ProductProblem struct {
	Index          int
	Field, Message string
}

// Path names the problem's field in the list: products[3].gtin.
func (p ProductProblem) Path() string { return "products[" + strconv.Itoa(p.Index) + "]." + p.Field }

// CatalogResult is what an import did.
type CatalogResult struct {
	Created, Updated int
	Problems         []ProductProblem
}

// check adds the problems of a product to out.
func (in *ProductInput) check(i int, out *[]ProductProblem) bool {
	in.GTIN, in.SKU = strings.TrimSpace(in.GTIN), strings.TrimSpace(in.SKU)
	in.Name, in.Category, in.Brand = strings.TrimSpace(in.Name), normalizeCategory(in.Category), strings.TrimSpace(in.Brand)
	n := len(*out)
	add := func(field, msg string) { *out = append(*out, ProductProblem{Index: i, Field: field, Message: msg}) }
	if in.GTIN == "" && in.SKU == "" {
		add("gtin", "or sku is required")
	}
	if in.GTIN != "" && (len(in.GTIN) < 8 || len(in.GTIN) > 14 || strings.Trim(in.GTIN, "0123456789") != "") {
		add("gtin", "must be 8 to 14 digits")
	}
	if len(in.SKU) > 128 {
		add("sku", "must be at most 128 characters")
	}
	switch {
	case in.Name == "":
		add("name", "is required")
	case len(in.Name) > 300:
		add("name", "must be at most 300 characters")
	}
	if len(in.Category) > 500 {
		add("category", "must be at most 500 characters")
	}
	if len(in.Brand) > 200 {
		add("brand", "must be at most 200 characters")
	}
	return len(*out) == n
}

// normalizeCategory writes a category path with its levels trimmed and
// separated by eligibility.CategorySeparator: "Bebidas>Cervejas " is
// "Bebidas > Cervejas".
func normalizeCategory(path string) string {
	levels := strings.Split(path, ">")
	kept := levels[:0]
	for _, l := range levels {
		if l = strings.TrimSpace(l); l != "" {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, eligibility.CategorySeparator)
}

// ImportProducts creates or updates the tenant's products: a product whose
// GTIN, or else SKU, is known is updated with the row's fields. Invalid
// rows, and rows repeating an earlier one's GTIN or SKU, are skipped with
// their problem; the others are written in one transaction.
func (a *Service) ImportProducts(ctx context.Context, rows []ProductInput) (*CatalogResult, error) {
	if err := Rules.ImportProducts.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("", rows); err != nil {
		return nil, err
	}
	switch {
	case len(rows) == 0:
		return nil, apperr.Invalid("products", "must hold at least one product")
	case len(rows) > MaxProductsAtOnce:
		return nil, apperr.Invalid("products", "must hold at most %d products; send more in several calls", MaxProductsAtOnce)
	}
	res := &CatalogResult{Problems: []ProductProblem{}}
	valid := make([]ProductInput, 0, len(rows))
	seen := map[string]bool{}
	var codes productCodes
	for i, r := range rows {
		if !r.check(i, &res.Problems) {
			continue
		}
		if seen["g"+r.GTIN] && r.GTIN != "" || seen["s"+r.SKU] && r.SKU != "" {
			res.Problems = append(res.Problems, ProductProblem{Index: i, Field: "gtin", Message: "repeats the GTIN or SKU of an earlier product of the list"})
			continue
		}
		seen["g"+r.GTIN], seen["s"+r.SKU] = true, true
		valid = append(valid, r)
		codes.add(r.GTIN, r.SKU)
	}
	if len(valid) == 0 {
		return res, nil
	}
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		res.Updated = 0 // a run again after a conflict counts afresh
		known, err := tx.Ent.Product.Query().Where(codes.match()).All(ctx)
		if err != nil {
			return err
		}
		find := productFinder(known)
		var creates []*ent.ProductCreate
		for _, r := range valid {
			p := find(r.GTIN, r.SKU)
			if p == nil {
				creates = append(creates, tx.Ent.Product.Create().SetNillableGtin(nonEmpty(r.GTIN)).
					SetNillableSku(nonEmpty(r.SKU)).SetName(r.Name).SetCategory(r.Category).SetBrand(r.Brand))
				continue
			}
			u := tx.Ent.Product.UpdateOne(p).SetName(r.Name).SetCategory(r.Category).SetBrand(r.Brand)
			if r.GTIN != "" {
				u.SetGtin(r.GTIN)
			}
			if r.SKU != "" {
				u.SetSku(r.SKU)
			}
			if err := u.Exec(ctx); err != nil {
				return err
			}
			res.Updated++
		}
		for chunk := range slices.Chunk(creates, 500) {
			if err := tx.Ent.Product.CreateBulk(chunk...).Exec(ctx); err != nil {
				return err
			}
		}
		res.Created = len(creates)
		return nil
	})
	a.catalogue().Purge() // this process sees the new catalogue at once
	if ent.IsConstraintError(err) {
		return nil, apperr.Conflict("duplicate_product", "products",
			"a product's GTIN or SKU belongs to another product of the catalogue (or was added meanwhile); correct the list and import it again")
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// productCodes are the GTINs and SKUs products are looked up by.
type productCodes struct{ gtins, skus []string }

func (p *productCodes) add(gtin, sku string) {
	if gtin != "" {
		p.gtins = append(p.gtins, gtin)
	}
	if sku != "" {
		p.skus = append(p.skus, sku)
	}
}

// match matches the products of any of the codes.
func (p *productCodes) match() predicate.Product {
	return product.Or(product.GtinIn(p.gtins...), product.SkuIn(p.skus...))
}

// productFinder finds among products the one of a GTIN, else of a SKU; nil
// when neither is known (no product has the empty GTIN or SKU).
func productFinder(products []*ent.Product) func(gtin, sku string) *ent.Product {
	byGTIN, bySKU := map[string]*ent.Product{}, map[string]*ent.Product{}
	for _, p := range products {
		if p.Gtin != nil {
			byGTIN[*p.Gtin] = p
		}
		if p.Sku != nil {
			bySKU[*p.Sku] = p
		}
	}
	return func(gtin, sku string) *ent.Product {
		if p := byGTIN[gtin]; p != nil {
			return p
		}
		return bySKU[sku]
	}
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// The catalogue as a process remembers it: what the products of cart items
// are (or that there is none), for catalogueTTL, up to catalogueEntries
// items. An import drops it at once in its process; others see the change
// within the TTL.
const (
	catalogueTTL     = 10 * time.Second
	catalogueEntries = 100_000
)

// productFacts is what enrichment takes of an item's product; known is
// false when the catalogue has none.
type productFacts struct {
	known           bool
	category, brand string
}

func (a *Service) catalogue() *expirable.LRU[string, productFacts] {
	a.catalogueOnce.Do(func() { a.products = expirable.NewLRU[string, productFacts](catalogueEntries, nil, catalogueTTL) })
	return a.products
}

// EnrichFromCatalogue fills in the category and brand of cart items from the
// tenant's catalogue, by GTIN or else SKU, where the item lacks them. Only
// campaigns targeting categories or brands need them: without one the
// catalogue is not read. Products are remembered (see catalogueTTL); those
// not remembered are read through c in one query.
func (a *Service) EnrichFromCatalogue(ctx context.Context, c *ent.Client, items []eligibility.Item, campaigns []eligibility.Campaign) error {
	if !slices.ContainsFunc(campaigns, func(c eligibility.Campaign) bool { return len(c.Categories) > 0 || len(c.Brands) > 0 }) {
		return nil
	}
	v, _ := viewer.FromContext(ctx)
	key := func(it *eligibility.Item) string { return v.TenantID + "\x00" + it.GTIN + "\x00" + it.SKU }
	cache := a.catalogue()
	var missed []int
	var codes productCodes
	for i := range items {
		it := &items[i]
		if it.Category != "" && it.Brand != "" || it.GTIN == "" && it.SKU == "" {
			continue
		}
		if f, ok := cache.Get(key(it)); ok {
			f.fill(it)
			continue
		}
		missed = append(missed, i)
		codes.add(it.GTIN, it.SKU)
	}
	if len(missed) == 0 {
		return nil
	}
	found, err := c.Product.Query().Where(codes.match()).
		Select(product.FieldGtin, product.FieldSku, product.FieldCategory, product.FieldBrand).All(ctx)
	if err != nil {
		return err
	}
	find := productFinder(found)
	for _, i := range missed {
		it := &items[i]
		var f productFacts
		if p := find(it.GTIN, it.SKU); p != nil {
			f = productFacts{known: true, category: p.Category, brand: p.Brand}
		}
		cache.Add(key(it), f)
		f.fill(it)
	}
	return nil
}

// fill gives an item its product's category and brand where it has none.
func (f productFacts) fill(it *eligibility.Item) {
	if !f.known {
		return
	}
	if it.Category == "" {
		it.Category = f.category
	}
	if it.Brand == "" {
		it.Brand = f.brand
	}
}
