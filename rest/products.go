package rest

import (
	"net/http"

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

// importProducts is POST /v1/products: products created or updated by GTIN,
// else SKU, with the problems of those skipped.
func (s *server) importProducts(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Products []productJSON `json:"products"`
	}
	if !s.decodeV1(w, r, &body) {
		return
	}
	rows := make([]campaigns.ProductInput, len(body.Products))
	for i, p := range body.Products {
		rows[i] = campaigns.ProductInput(p)
	}
	res, err := s.app.Campaigns.ImportProducts(r.Context(), rows)
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	type problem struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	}
	problems := make([]problem, len(res.Problems))
	for i, p := range res.Problems {
		problems[i] = problem{Field: p.Path(), Message: p.Message}
	}
	writeJSON(w, http.StatusOK, map[string]any{"created": res.Created, "updated": res.Updated, "problems": problems})
}
