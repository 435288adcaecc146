package rest

import (
	"github.com/fideliza/fideliza/app/campaigns"
)

// productJSON is a product of POST /v1/products.
type productJSON struct {
	GTIN     string `json:"gtin"`
	SKU      string `json:"sku"`
	Name     string `json:"name"`
	Category string `json:"category"`
	Brand    string `json:"brand"`
}

// readProducts reads POST /v1/products: products created or updated by
// GTIN, else SKU, with the problems of those skipped.
func readProducts(b *binder) []campaigns.ProductInput {
	body := jsonBody[struct {
		Products []productJSON `json:"products"`
	}](b)
	rows := make([]campaigns.ProductInput, len(body.Products))
	for i, p := range body.Products {
		rows[i] = campaigns.ProductInput(p)
	}
	return rows
}

// catalogJSON is the answer of POST /v1/products; its fields are in the
// order of their names.
type catalogJSON struct {
	Created  int                  `json:"created"`
	Problems []productProblemJSON `json:"problems"`
	Updated  int                  `json:"updated"`
}

type productProblemJSON struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func renderCatalog(res *campaigns.CatalogResult) catalogJSON {
	problems := make([]productProblemJSON, len(res.Problems))
	for i, p := range res.Problems {
		problems[i] = productProblemJSON{Field: p.Path(), Message: p.Message}
	}
	return catalogJSON{Created: res.Created, Problems: problems, Updated: res.Updated}
}
