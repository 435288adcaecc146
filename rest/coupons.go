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

// readCoupons reads POST /v1/campaigns/{id}/coupons.
func readCoupons(b *binder) campaigns.CouponsInput {
	body := jsonBody[couponsBody](b)
	in := campaigns.CouponsInput{CampaignID: pathID(b), Codes: body.Codes, MaxUses: body.MaxUses, Note: body.Note}
	if g := body.Generate; g != nil {
		in.Generate = &campaigns.CouponGeneration{Count: g.Count, Length: g.Length, Prefix: g.Prefix, Alphabet: g.Alphabet}
	}
	return in
}

// couponsAddedJSON is the answer of adding coupons; its fields are in the
// order of their names.
type couponsAddedJSON struct {
	CampaignID string              `json:"campaign_id"`
	Created    int                 `json:"created"`
	Problems   []apperr.FieldError `json:"problems"`
}

func renderCouponsAdded(in campaigns.CouponsInput, added *campaigns.CouponsAdded) couponsAddedJSON {
	problems := added.Problems
	if problems == nil {
		problems = []apperr.FieldError{}
	}
	return couponsAddedJSON{CampaignID: in.CampaignID, Created: added.Created, Problems: problems}
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

// listCoupons is GET /v1/campaigns/{id}/coupons: a page of codes as JSON
// (page), or, with ?format=csv, every code as CSV (streamed).
func (s *server) listCoupons(page http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") == "csv" {
			s.exportCoupons(w, r, chi.URLParam(r, "id"))
			return
		}
		page(w, r)
	}
}

func couponPage(conn *ent.CouponConnection) listJSON[couponJSON] {
	return pageOf(conn.Edges, conn.PageInfo, conn.TotalCount, func(e *ent.CouponEdge) couponJSON { return renderCoupon(e.Node) })
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
