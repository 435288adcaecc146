package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// campCampaignKeys are the keys of a campaign.
var campCampaignKeys = sortedCopy("id", "name", "description", "type", "status", "starts_at", "ends_at", "segment_id", "predictive_segment",
	"channels", "store_codes", "store_groups", "discount", "eligibility", "limits", "budget", "stacking", "priority", "requires_code", "holdout_basis_points", "redemptions_count", "redemptions_limit",
	"created_at", "updated_at")

func TestCampaignCreate(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		cust := e.campCustomer(t, "Ana Souza")
		seg := e.campSegment(t, "vip", cust)

		t.Run("active discount: the full campaign", func(t *testing.T) {
			starts := e.clock.Now().Add(-time.Hour).In(time.FixedZone("-03", -3*3600))
			body := e.campBody("discount",
				"starts_at", starts.Format(time.RFC3339), "segment_id", seg, "channels", []string{"ecommerce", "app"},
				"discount", map[string]any{"mode": "percentage", "value": json.Number("12.5")},
				"eligibility", map[string]any{"min_subtotal": json.Number("50.00"), "skus": []string{"SKU-1"}, "categories": []string{"bebidas"}},
				"limits", map[string]any{"per_customer": 2, "total": 100})
			m := e.campCreate(t, body)
			require.Equal(t, campCampaignKeys, sortedKeys(m))
			require.Regexp(t, `^cmp_[0-9a-z]{26}$`, m["id"])
			require.Equal(t, "Campanha discount", m["name"])
			require.Equal(t, "Campanha de teste discount", m["description"])
			require.Equal(t, "discount", m["type"])
			require.Equal(t, "active", m["status"])
			require.Equal(t, campStamp(starts), m["starts_at"], "rendered in UTC")
			require.Equal(t, body["ends_at"], m["ends_at"])
			require.Equal(t, seg, m["segment_id"])
			require.Equal(t, []any{"ecommerce", "app"}, m["channels"])
			d := m["discount"].(map[string]any)
			require.Equal(t, []string{"mode", "value"}, sortedKeys(d))
			require.Equal(t, "percentage", d["mode"])
			campRequireDec(t, "12.5", d["value"], "discount.value")
			el := m["eligibility"].(map[string]any)
			campRequireDec(t, "50", el["min_subtotal"], "min_subtotal")
			require.Equal(t, []any{"SKU-1"}, el["skus"])
			require.Equal(t, []any{"bebidas"}, el["categories"])
			require.Equal(t, map[string]any{"per_customer": json.Number("2"), "total": json.Number("100")}, m["limits"])
			require.Equal(t, json.Number("0"), m["redemptions_count"])
			require.Equal(t, json.Number("100"), m["redemptions_limit"])
			require.NotEmpty(t, m["created_at"])
			require.NotEmpty(t, m["updated_at"])

			// GET answers the same campaign.
			r := e.campDo(t, http.MethodGet, "/v1/campaigns/"+m["id"].(string), e.token, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			require.Equal(t, m, r.obj(t))
		})

		t.Run("scheduled when it starts later; defaults", func(t *testing.T) {
			m := e.campCreate(t, e.campBody("gift", "starts_at", e.campAt(time.Hour), "description", nil))
			require.Equal(t, "scheduled", m["status"])
			require.Equal(t, "", m["description"])
			require.Nil(t, m["segment_id"], "absent segment_id: every customer")
			require.Equal(t, []any{}, m["channels"], "absent channels: every channel")
			require.Equal(t, map[string]any{"gift_sku": "BRINDE-1"}, m["discount"])
			require.Equal(t, map[string]any{"min_subtotal": nil, "skus": []any{}, "categories": []any{}, "brands": []any{}}, m["eligibility"])
			require.Equal(t, map[string]any{"per_customer": nil, "total": nil}, m["limits"])
			require.Nil(t, m["redemptions_limit"])
		})

		t.Run("starting now is active", func(t *testing.T) {
			m := e.campCreate(t, e.campBody("discount", "starts_at", e.campAt(0)))
			require.Equal(t, "active", m["status"])
		})

		t.Run("each type's benefit", func(t *testing.T) {
			m := e.campCreate(t, e.campBody("cashback", "discount", map[string]any{"mode": "fixed_amount", "value": json.Number("15.00")}))
			d := m["discount"].(map[string]any)
			require.Equal(t, "fixed_amount", d["mode"])
			campRequireDec(t, "15", d["value"], "value")
			require.Equal(t, json.Number("0"), d["credit_after_days"], "cashback without credit_after_days is credited at once")

			m = e.campCreate(t, e.campBody("cashback", "discount", map[string]any{"mode": "percentage", "value": 5, "credit_after_days": 7}))
			require.Equal(t, json.Number("7"), m["discount"].(map[string]any)["credit_after_days"])

			m = e.campCreate(t, e.campBody("bonus_points", "discount", map[string]any{"multiplier": json.Number("1.5")}))
			d = m["discount"].(map[string]any)
			require.Equal(t, []string{"multiplier"}, sortedKeys(d))
			campRequireDec(t, "1.5", d["multiplier"], "multiplier")

			m = e.campCreate(t, e.campBody("discount", "discount", map[string]any{"mode": "free_shipping"}))
			require.Equal(t, map[string]any{"mode": "free_shipping"}, m["discount"])
		})
	})
}

func TestCampaignCreateValidation(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		disc := func(d map[string]any) any { return d }
		cases := []struct {
			name    string
			body    map[string]any
			details []string
		}{
			{"empty body", map[string]any{}, []string{"name", "type", "starts_at", "ends_at"}},
			{"missing name", e.campBody("discount", "name", nil), []string{"name"}},
			{"blank name", e.campBody("discount", "name", "   "), []string{"name"}},
			{"missing type", e.campBody("discount", "type", nil), []string{"type"}},
			{"unknown type", e.campBody("discount", "type", "coupon"), []string{"type"}},
			{"missing starts_at", e.campBody("discount", "starts_at", nil), []string{"starts_at"}},
			{"missing ends_at", e.campBody("discount", "ends_at", nil), []string{"ends_at"}},
			{"starts_at without offset", e.campBody("discount", "starts_at", "2026-05-04T10:00:00"), []string{"starts_at"}},
			{"ends_at not a date", e.campBody("discount", "ends_at", "amanhã"), []string{"ends_at"}},
			{"ends before starts", e.campBody("discount", "starts_at", e.campAt(48*time.Hour), "ends_at", e.campAt(24*time.Hour)), []string{"ends_at"}},
			{"ends when it starts", e.campBody("discount", "starts_at", e.campAt(time.Hour), "ends_at", e.campAt(time.Hour)), []string{"ends_at"}},
			{"ended already", e.campBody("discount", "starts_at", e.campAt(-48*time.Hour), "ends_at", e.campAt(-time.Hour)), []string{"ends_at"}},
			{"discount without discount", e.campBody("discount", "discount", nil), []string{"discount.mode"}},
			{"unknown mode", e.campBody("discount", "discount", disc(map[string]any{"mode": "bogo", "value": 10})), []string{"discount.mode"}},
			{"percentage without value", e.campBody("discount", "discount", disc(map[string]any{"mode": "percentage"})), []string{"discount.value"}},
			{"percentage zero", e.campBody("discount", "discount", disc(map[string]any{"mode": "percentage", "value": 0})), []string{"discount.value"}},
			{"percentage above 100", e.campBody("discount", "discount", disc(map[string]any{"mode": "percentage", "value": json.Number("100.01")})), []string{"discount.value"}},
			{"fixed amount zero", e.campBody("discount", "discount", disc(map[string]any{"mode": "fixed_amount", "value": 0})), []string{"discount.value"}},
			{"fixed amount negative", e.campBody("discount", "discount", disc(map[string]any{"mode": "fixed_amount", "value": -5})), []string{"discount.value"}},
			{"free shipping with value", e.campBody("discount", "discount", disc(map[string]any{"mode": "free_shipping", "value": 5})), []string{"discount.value"}},
			{"value not a number", e.campBody("discount", "discount", disc(map[string]any{"mode": "percentage", "value": "10"})), []string{"discount.value"}},
			{"cashback without mode", e.campBody("cashback", "discount", disc(map[string]any{"credit_after_days": 3})), []string{"discount.mode"}},
			{"cashback negative days", e.campBody("cashback", "discount", disc(map[string]any{"mode": "percentage", "value": 5, "credit_after_days": -1})), []string{"discount.credit_after_days"}},
			{"credit_after_days on a discount", e.campBody("discount", "discount", disc(map[string]any{"mode": "percentage", "value": 5, "credit_after_days": 3})), []string{"discount.credit_after_days"}},
			{"bonus without multiplier", e.campBody("bonus_points", "discount", nil), []string{"discount.multiplier"}},
			{"bonus multiplier 1", e.campBody("bonus_points", "discount", disc(map[string]any{"multiplier": 1})), []string{"discount.multiplier"}},
			{"bonus multiplier below 1", e.campBody("bonus_points", "discount", disc(map[string]any{"multiplier": json.Number("0.5")})), []string{"discount.multiplier"}},
			{"gift without sku", e.campBody("gift", "discount", nil), []string{"discount.gift_sku"}},
			{"gift blank sku", e.campBody("gift", "discount", disc(map[string]any{"gift_sku": " "})), []string{"discount.gift_sku"}},
			{"mode and value on a gift", e.campBody("gift", "discount", disc(map[string]any{"gift_sku": "G", "mode": "percentage", "value": 10})), []string{"discount.mode", "discount.value"}},
			{"multiplier on a discount", e.campBody("discount", "discount", disc(map[string]any{"mode": "percentage", "value": 10, "multiplier": 2})), []string{"discount.multiplier"}},
			{"gift_sku on a cashback", e.campBody("cashback", "discount", disc(map[string]any{"mode": "percentage", "value": 10, "gift_sku": "G"})), []string{"discount.gift_sku"}},
			{"credit_after_days on bonus points", e.campBody("bonus_points", "discount", disc(map[string]any{"multiplier": 2, "credit_after_days": 0})), []string{"discount.credit_after_days"}},
			{"unknown segment", e.campBody("discount", "segment_id", "seg_00000000000000000000000000"), []string{"segment_id"}},
			{"per_customer zero", e.campBody("discount", "limits", map[string]any{"per_customer": 0}), []string{"limits.per_customer"}},
			{"total zero", e.campBody("discount", "limits", map[string]any{"total": 0}), []string{"limits.total"}},
			{"both limits negative", e.campBody("discount", "limits", map[string]any{"per_customer": -1, "total": -1}), []string{"limits.per_customer", "limits.total"}},
			{"negative min_subtotal", e.campBody("discount", "eligibility", map[string]any{"min_subtotal": -1}), []string{"eligibility.min_subtotal"}},
			{"blank channel", e.campBody("discount", "channels", []string{"pdv", ""}), []string{"channels"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.campDo(t, http.MethodPost, "/v1/campaigns", e.token, tc.body)
				requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", tc.details[0], tc.details...)
			})
		}

		t.Run("a limit of the wrong type", func(t *testing.T) {
			r := e.campDo(t, http.MethodPost, "/v1/campaigns", e.token, e.campBody("discount", "limits", map[string]any{"total": "10"}))
			requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "limits.total", "limits.total")
		})
		t.Run("malformed JSON", func(t *testing.T) {
			r := e.campDo(t, http.MethodPost, "/v1/campaigns", e.token, `{"name": "x",`)
			requireV1Error(t, r, http.StatusBadRequest, "invalid_json", "")
		})
		t.Run("another tenant's segment is unknown", func(t *testing.T) {
			other, err := e.app.Backoffice.CreateTenant(campSys(), "Outra Loja", nil)
			require.NoError(t, err)
			seg, err := e.db.Ent.Segment.Create().SetName("vip").Save(viewer.TenantContext(context.Background(), other.ID))
			require.NoError(t, err)
			r := e.campDo(t, http.MethodPost, "/v1/campaigns", e.token, e.campBody("discount", "segment_id", seg.ID))
			requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "segment_id", "segment_id")
		})

		n, err := e.db.Ent.Campaign.Query().Count(campSys())
		require.NoError(t, err)
		require.Zero(t, n, "no refused campaign is stored")
	})
}

// campListed reads one page of GET /v1/campaigns.
type campListed struct {
	ids, statuses []string
	next          any
	hasMore       bool
	total         int64
}

func (e *campEnv) campList(t *testing.T, q url.Values) campListed {
	t.Helper()
	r := e.campDo(t, http.MethodGet, "/v1/campaigns?"+q.Encode(), e.token, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	m := r.obj(t)
	require.Equal(t, []string{"data", "pagination"}, sortedKeys(m))
	var out campListed
	for _, x := range m["data"].([]any) {
		c := x.(map[string]any)
		require.Equal(t, campCampaignKeys, sortedKeys(c))
		out.ids = append(out.ids, c["id"].(string))
		out.statuses = append(out.statuses, c["status"].(string))
	}
	p := m["pagination"].(map[string]any)
	require.Equal(t, []string{"has_more", "next_cursor", "total"}, sortedKeys(p))
	out.next, out.hasMore, out.total = p["next_cursor"], p["has_more"].(bool), campInt(t, p["total"])
	if !out.hasMore {
		require.Nil(t, out.next)
	}
	return out
}

func TestCampaignList(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		day := 24 * time.Hour
		// Created in this order, so listed the other way round.
		ecommerce := e.campCreateID(t, "discount", "channels", []string{"ecommerce"})
		everyChannel := e.campCreateID(t, "cashback")
		a := e.campCreateID(t, "bonus_points", "channels", []string{"app", "pdv"})
		scheduled := e.campCreateID(t, "gift", "starts_at", e.campAt(2*day), "channels", []string{"ecommerce"})
		deleted := e.campCreateID(t, "discount")
		endsSoon := e.campCreateID(t, "discount", "ends_at", e.campAt(time.Hour))
		paused := e.campCreateID(t, "cashback")
		r := e.campDo(t, http.MethodDelete, "/v1/campaigns/"+deleted, e.token, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		_, err := e.app.Campaigns.PauseCampaign(e.ctx, paused)
		require.NoError(t, err)
		// endsSoon passes its end; no lifecycle job has run.
		e.clock.Advance(2 * time.Hour)
		stored, err := e.db.Ent.Campaign.Get(e.ctx, endsSoon)
		require.NoError(t, err)
		require.Equal(t, campaign.StatusScheduled, stored.Status, "the stored status is stale (the lifecycle job has not run)")

		all := e.campList(t, url.Values{})
		require.Equal(t, []string{paused, endsSoon, deleted, scheduled, a, everyChannel, ecommerce}, all.ids, "newest first")
		require.Equal(t, []string{"paused", "ended", "ended", "scheduled", "active", "active", "active"}, all.statuses)
		require.EqualValues(t, 7, all.total)
		require.False(t, all.hasMore)

		for _, tc := range []struct {
			query url.Values
			want  []string
		}{
			{url.Values{"status": {"active"}}, []string{a, everyChannel, ecommerce}},
			{url.Values{"status": {"scheduled"}}, []string{scheduled}},
			{url.Values{"status": {"ended"}}, []string{endsSoon, deleted}},
			{url.Values{"status": {"paused"}}, []string{paused}},
			{url.Values{"type": {"cashback"}}, []string{paused, everyChannel}},
			{url.Values{"type": {"gift"}}, []string{scheduled}},
			{url.Values{"channel": {"ecommerce"}}, []string{paused, endsSoon, deleted, scheduled, everyChannel, ecommerce}},
			{url.Values{"channel": {"app"}}, []string{paused, endsSoon, deleted, a, everyChannel}},
			{url.Values{"channel": {"totem"}}, []string{paused, endsSoon, deleted, everyChannel}},
			{url.Values{"status": {"active"}, "channel": {"ecommerce"}}, []string{everyChannel, ecommerce}},
			{url.Values{"status": {"active"}, "type": {"discount"}, "channel": {"ecommerce"}}, []string{ecommerce}},
			{url.Values{"status": {"scheduled"}, "type": {"discount"}}, nil},
		} {
			t.Run(tc.query.Encode(), func(t *testing.T) {
				got := e.campList(t, tc.query)
				require.Equal(t, tc.want, got.ids)
				require.EqualValues(t, len(tc.want), got.total)
				if s := tc.query.Get("status"); s != "" {
					for _, st := range got.statuses {
						require.Equal(t, s, st)
					}
				}
			})
		}

		t.Run("pages", func(t *testing.T) {
			var seen []string
			q := url.Values{"limit": {"3"}}
			total := 7
			for pages := 1; ; pages++ {
				p := e.campList(t, q)
				require.EqualValues(t, total, p.total)
				require.LessOrEqual(t, len(p.ids), 3)
				seen = append(seen, p.ids...)
				if !p.hasMore {
					require.Equal(t, 3, pages)
					break
				}
				q.Set("cursor", p.next.(string))
				// A campaign created meanwhile does not shift the pages.
				if pages == 1 {
					e.campCreateID(t, "gift")
					total++
				}
			}
			require.Equal(t, all.ids, seen)

			p := e.campList(t, url.Values{"status": {"active"}, "limit": {"2"}})
			require.Len(t, p.ids, 2)
			require.True(t, p.hasMore)
			require.EqualValues(t, 4, p.total, "the new gift is active too")
		})

		t.Run("default page of 20", func(t *testing.T) {
			for range 15 {
				e.campCreateID(t, "gift")
			}
			p := e.campList(t, url.Values{})
			require.Len(t, p.ids, 20)
			require.True(t, p.hasMore)
			require.EqualValues(t, 23, p.total)
		})

		t.Run("bad parameters", func(t *testing.T) {
			for _, tc := range []struct{ query, field string }{
				{"status=live", "status"},
				{"type=coupon", "type"},
				{"limit=0", "limit"},
				{"limit=101", "limit"},
				{"limit=ten", "limit"},
				{"cursor=nonsense", "cursor"},
			} {
				r := e.campDo(t, http.MethodGet, "/v1/campaigns?"+tc.query, e.token, nil)
				requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", tc.field, tc.field)
			}
		})
	})
}

func TestCampaignReadAndDelete(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		cust := e.campCustomer(t, "Bia Lima")
		active := e.campCreateID(t, "discount")
		scheduled := e.campCreateID(t, "gift", "starts_at", e.campAt(time.Hour))
		require.Contains(t, campEligible(t, e.campValidate(t, cust, "pdv", campCart(), false)), active)

		r := e.campDo(t, http.MethodGet, "/v1/campaigns/cmp_00000000000000000000000000", e.token, nil)
		requireV1Error(t, r, http.StatusNotFound, "not_found", "")
		r = e.campDo(t, http.MethodDelete, "/v1/campaigns/cmp_00000000000000000000000000", e.token, nil)
		requireV1Error(t, r, http.StatusNotFound, "not_found", "")

		r = e.campDo(t, http.MethodDelete, "/v1/campaigns/"+active, e.token, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		first := r.obj(t)
		require.Equal(t, campCampaignKeys, sortedKeys(first))
		require.Equal(t, "ended", first["status"])
		stored, err := e.db.Ent.Campaign.Get(e.ctx, active)
		require.NoError(t, err)
		require.Equal(t, campaign.StatusEnded, stored.Status)

		// Again: the same answer, nothing changes.
		r = e.campDo(t, http.MethodDelete, "/v1/campaigns/"+active, e.token, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, first, r.obj(t))

		r = e.campDo(t, http.MethodGet, "/v1/campaigns/"+active, e.token, nil)
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, first, r.obj(t))
		require.NotContains(t, campEligible(t, e.campValidate(t, cust, "pdv", campCart(), false)), active)

		r = e.campDo(t, http.MethodDelete, "/v1/campaigns/"+scheduled, e.token, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, "ended", r.obj(t)["status"])
		e.clock.Advance(2 * time.Hour)
		r = e.campDo(t, http.MethodGet, "/v1/campaigns/"+scheduled, e.token, nil)
		require.Equal(t, "ended", r.obj(t)["status"], "an ended campaign does not start")

		t.Run("another tenant's campaign", func(t *testing.T) {
			other, err := e.app.Backoffice.CreateTenant(campSys(), "Outra Loja", nil)
			require.NoError(t, err)
			starts, ends := e.clock.Now().Add(-time.Hour), e.clock.Now().Add(time.Hour)
			c, err := e.app.Campaigns.CreateCampaign(viewer.TenantContext(context.Background(), other.ID), campaigns.CampaignInput{
				Name: "Alheia", Type: "gift", StartsAt: &starts, EndsAt: &ends, Discount: &campaigns.DiscountInput{GiftSKU: opt.Of("G").Ptr()},
			})
			require.NoError(t, err)
			r := e.campDo(t, http.MethodGet, "/v1/campaigns/"+c.ID, e.token, nil)
			requireV1Error(t, r, http.StatusNotFound, "not_found", "")
			r = e.campDo(t, http.MethodDelete, "/v1/campaigns/"+c.ID, e.token, nil)
			requireV1Error(t, r, http.StatusNotFound, "not_found", "")
			require.NotContains(t, e.campList(t, url.Values{}).ids, c.ID)
			require.NotContains(t, campEligible(t, e.campValidate(t, cust, "pdv", campCart(), false)), c.ID)
			got, err := e.db.Ent.Campaign.Get(campSys(), c.ID)
			require.NoError(t, err)
			require.Equal(t, campaign.StatusScheduled, got.Status, "stored scheduled until the lifecycle job activates it")
		})
	})
}
