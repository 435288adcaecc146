package rest

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/safecsv"
)

// couponsBody is POST /v1/campaigns/{id}/coupons: generate codes, or import
// a list.
type couponsBody struct {
	Generate *struct {
		Count    int    `json:"count"`
		Length   int    `json:"length"`
		Prefix   string `json:"prefix"`
		Alphabet string `json:"alphabet"`
	} `json:"generate"`
	Codes   []string `json:"codes"`
	MaxUses int      `json:"max_uses"`
	Note    string   `json:"note"`
}

// addCoupons is POST /v1/campaigns/{id}/coupons.
func (s *server) addCoupons(w http.ResponseWriter, r *http.Request) {
	var body couponsBody
	if !s.decodeV1(w, r, &body) {
		return
	}
	in := campaigns.CouponsInput{CampaignID: chi.URLParam(r, "id"), Codes: body.Codes, MaxUses: body.MaxUses, Note: body.Note}
	if g := body.Generate; g != nil {
		in.Generate = &campaigns.CouponGeneration{Count: g.Count, Length: g.Length, Prefix: g.Prefix, Alphabet: g.Alphabet}
	}
	added, err := s.app.Campaigns.AddCoupons(r.Context(), in)
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	problems := added.Problems
	if problems == nil {
		problems = []apperr.FieldError{}
	}
	writeJSON(w, http.StatusCreated, map[string]any{"campaign_id": in.CampaignID, "created": added.Created, "problems": problems})
}

type couponJSON struct {
	ID         string  `json:"id"`
	Code       string  `json:"code"`
	Status     string  `json:"status"`
	MaxUses    int     `json:"max_uses"`
	Uses       int     `json:"uses"`
	LastUsedAt *string `json:"last_used_at"`
	Note       string  `json:"note"`
	CreatedAt  string  `json:"created_at"`
}

func renderCoupon(c *ent.Coupon) couponJSON {
	return couponJSON{ID: c.ID, Code: c.Code, Status: campaigns.CouponStatus(c), MaxUses: c.MaxUses, Uses: c.Uses,
		LastUsedAt: optTimestamp(c.LastUsedAt), Note: c.Note, CreatedAt: timestamp(c.CreatedAt)}
}

// listCoupons is GET /v1/campaigns/{id}/coupons: a page of codes as JSON,
// or, with ?format=csv, every code as CSV (streamed).
func (s *server) listCoupons(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	q := r.URL.Query()
	if q.Get("format") == "csv" {
		s.exportCoupons(w, r, id)
		return
	}
	var p apperr.Problems
	after, limit := pageQuery(q, "cpn_", &p)
	if err := p.Err(); err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	conn, err := s.app.Campaigns.ListCoupons(r.Context(), id, after, limit)
	if err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	items := make([]couponJSON, 0, len(conn.Edges))
	for _, e := range conn.Edges {
		items = append(items, renderCoupon(e.Node))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": items, "pagination": newPagination(conn.PageInfo, conn.TotalCount)})
}

// couponColumns are the columns of the CSV export.
var couponColumns = []string{"code", "status", "uses", "max_uses", "last_used_at", "note", "created_at"}

// exportCoupons writes every code of a campaign as CSV; an error before the
// first code is answered as JSON, after it ends the body early.
func (s *server) exportCoupons(w http.ResponseWriter, r *http.Request, campaignID string) {
	var out *safecsv.Writer
	err := s.app.Campaigns.EachCoupon(r.Context(), campaignID, func(c *ent.Coupon) error {
		if out == nil {
			w.Header().Set("Content-Type", "text/csv; charset=utf-8")
			w.Header().Set("Content-Disposition", `attachment; filename="coupons-`+campaignID+`.csv"`)
			out = safecsv.NewWriter(w)
			_ = out.Write(couponColumns)
		}
		last := ""
		if c.LastUsedAt != nil {
			last = timestamp(*c.LastUsedAt)
		}
		return out.Write([]string{c.Code, campaigns.CouponStatus(c), strconv.Itoa(c.Uses), strconv.Itoa(c.MaxUses), last, c.Note, timestamp(c.CreatedAt)})
	})
	if out == nil && err != nil {
		s.writeV1Error(w, r, err)
		return
	}
	if out == nil { // no codes: the header alone
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		out = safecsv.NewWriter(w)
		_ = out.Write(couponColumns)
	}
	out.Flush()
	if err != nil {
		s.log.ErrorContext(r.Context(), "coupon export stopped", "request_id", RequestID(r.Context()), "campaign_id", campaignID, "error", err)
	}
}
