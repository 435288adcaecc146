package audiences_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// variedShop is a tenant (in America/Sao_Paulo, at a fixed now) of
// customers whose facts cover the edges of the audiences' facts: no
// purchase, purchases on the first and last instants of a local day,
// purchases returned, stores in two groups and in none, lifetime values
// at half a cent, unknown birth dates, cities and churn scores.
type variedShop struct {
	a   *app.App
	ctx context.Context
	vip string // a static segment's id
}

// varied customers' lifetime values, one after the other.
var variedValues = []string{"0", "12.345", "12.34499999", "12.35", "1000", "999.995", "1000.004", "0.1", "19.99", "-0.005", "250.5", "0.004"}

func newVariedShop(t *testing.T, db *storage.DB) *variedShop {
	t.Helper()
	now := time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)
	env := apptest.New(t, db, apptest.WithClock(func() time.Time { return now }), apptest.WithTenant("Variada"),
		apptest.WithStore("LOJA-N", "Loja LOJA-N", "norte"), apptest.WithStore("LOJA-S", "Loja LOJA-S", "sul", "litoral"),
		apptest.WithStore("LOJA-X", "Loja LOJA-X"))
	a, ctx := env.App, env.Ctx
	var stores []string
	for _, s := range env.Stores {
		stores = append(stores, s.ID)
	}
	vip, err := a.Customers.CreateSegment(ctx, customers.SegmentInput{Name: opt.Of("VIP").Ptr()})
	require.NoError(t, err)
	loc, err := points.Zone("America/Sao_Paulo")
	require.NoError(t, err)
	y, m, d := now.In(loc).Date()
	dayBegins := func(ago int) time.Time { return time.Date(y, m, d-ago, 0, 0, 0, 0, loc) }
	// Sales' instants: a local day's first instant, its last, and midday,
	// some in UTC and some in the tenant's zone (SQLite keeps the offset).
	soldAt := []time.Time{
		dayBegins(180).UTC(), dayBegins(180).Add(-time.Second), dayBegins(0).Add(time.Hour), dayBegins(1).Add(12 * time.Hour).UTC(),
		dayBegins(30).Add(-time.Millisecond).UTC(), dayBegins(179).Add(23*time.Hour + 59*time.Minute + 59*time.Second), dayBegins(365).UTC(),
		dayBegins(700).Add(3 * time.Hour),
	}
	var vips []string
	for i := range 36 {
		c, err := a.Customers.CreateCustomer(ctx, customers.CustomerInput{Name: opt.Of(fmt.Sprintf("Cliente %d", i)), CPF: opt.Of(document.CPFOf(300000001 + i)),
			Email: opt.Of(fmt.Sprintf("c%d@x.example", i))})
		require.NoError(t, err)
		var birth, city, state any
		if i%5 != 0 {
			birth = fmt.Sprintf("19%02d-%02d-%02d", 50+i, i%12+1, i%28+1)
		}
		city = []any{nil, "", "Recife", "São Paulo"}[i%4]
		state = []any{nil, "PE", "SP"}[i%3]
		_, err = db.SQL.ExecContext(ctx, `UPDATE customers SET level = $1, points_balance = $2, lifetime_value = $3, birth_date = $4,
address_city = $5, address_state = $6, consent_marketing_email = $7, consent_marketing_sms = $8, consent_marketing_whatsapp = $9,
consent_data_sharing = $10 WHERE id = $11`,
			[]string{"bronze", "silver", "gold", "diamond"}[i%4], i*37%500, variedValues[i%len(variedValues)], birth, city, state,
			i%2 == 0, i%3 == 0, i%5 == 0, i%7 == 0, c.ID)
		require.NoError(t, err)
		if i%3 == 0 {
			vips = append(vips, c.ID)
		}
		// Churn: unscored, scored high, low, or scored with no probability.
		if i%4 != 0 {
			pAlive := []any{nil, 0.2, 0.9, nil}[i%4]
			_, err = db.SQL.ExecContext(ctx, `INSERT INTO customer_scores (id, scored_at, risk, p_alive, monetary_value, customer_id, tenant_id)
VALUES ($1, $2, $3, $4, '0', $5, $6)`, fmt.Sprintf("csc_%d_%s", i, c.ID), now, []string{"", "high", "low", "medium"}[i%4], pAlive, c.ID, env.TenantID)
			require.NoError(t, err)
		}
		if i%6 == 0 {
			continue // no purchase
		}
		for j := range 1 + i%4 {
			status := "PROCESSED"
			if (i+j)%7 == 0 {
				status = []string{"RETURNED", "CANCELLED"}[j%2]
			}
			_, err = db.SQL.ExecContext(ctx, `INSERT INTO sales (id, created_at, external_id, sold_at, amount, amount_payable,
discount_amount, status, processed_at, tenant_id, store_id, customer_id) VALUES ($1, $2, $3, $4, '10', '10', '0', $5, $2, $6, $7, $8)`,
				fmt.Sprintf("sal_%d_%d", i, j), now, fmt.Sprintf("%d-%d", i, j), soldAt[(i*3+j*5)%len(soldAt)], status, env.TenantID,
				stores[(i+j)%len(stores)], c.ID)
			require.NoError(t, err)
		}
	}
	_, err = a.Customers.AddSegmentCustomers(ctx, vip.ID, vips)
	require.NoError(t, err)
	return &variedShop{a: a, ctx: ctx, vip: vip.ID}
}

// TestAudiencePreviewCountedInTheDatabase: for many rules (each construct
// the preview translates into SQL, the facts' edges, rules that fail for
// some customers, and rules it does not translate), the preview's count
// and sample are those of the audience the rule makes when saved, whose
// members are evaluated in Go.
func TestAudiencePreviewCountedInTheDatabase(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		s := newVariedShop(t, db)
		first := `level == "gold"`
		audience, err := s.a.Customers.CreateSegment(s.ctx, customers.SegmentInput{Name: opt.Of("Ouro").Ptr(), Rule: &first})
		require.NoError(t, err)
		rules := []string{
			`true`, `false`, `!false`,
			`level == "gold"`, `"gold" == level`, `level != "bronze"`, `level in ["gold", "diamond"]`, `level == "nenhum"`,
			`points >= 100`, `points > 99.5`, `points < 250.5`, `100 <= points`, `points == 37`, `points != 37`, `points in [0, 37, 74]`,
			`points >= 100u`, `points <= 36.9`,
			`lifetime_value >= 12.35`, `lifetime_value == 12.35`, `lifetime_value < 12.35`, `lifetime_value > 12.34`,
			`lifetime_value <= 0`, `lifetime_value >= 0`, `lifetime_value < 0`, `lifetime_value == -0.01`, `lifetime_value != 1000.0`,
			`lifetime_value > 999.99`, `lifetime_value == 0.1`, `lifetime_value == 1000.0`, `lifetime_value in [19.99, 1000, 250.5]`,
			`lifetime_value >= 1000 && level == "bronze"`, `lifetime_value > 12.345`, `lifetime_value >= 0.005`, `lifetime_value == 0.0`,
			`purchases == 0`, `purchases >= 2`, `purchases > 1.5`, `purchases < 3`,
			`days_since_last_purchase <= 180`, `days_since_last_purchase < 180`, `days_since_last_purchase >= 180`,
			`days_since_last_purchase > 180`, `days_since_last_purchase == 180`, `days_since_last_purchase != 180`,
			`days_since_last_purchase == -1`, `days_since_last_purchase <= -1`, `days_since_last_purchase == 0`,
			`days_since_last_purchase >= 0`, `days_since_last_purchase <= 30 && purchases >= 2`, `days_since_last_purchase > 364.5`,
			`days_since_last_purchase in [0, 180]`,
			`group_purchases["norte"] >= 1`, `group_purchases["sul"] >= 2`, `group_purchases["nenhum"] >= 0`,
			`!(group_purchases["norte"] >= 1)`, `group_purchases["norte"] >= 1 || level == "gold"`,
			`group_purchases["norte"] >= 1 && level == "gold"`, `!(group_purchases["norte"] >= 1 || level == "gold")`,
			`!(group_purchases["norte"] >= 1 && false)`, `group_purchases["litoral"] == group_purchases["litoral"] || true`,
			`"norte" in group_purchases`, `!("sul" in group_days_since_last_purchase)`, `"nenhum" in group_purchases`,
			`group_days_since_last_purchase["sul"] <= 30`, `group_days_since_last_purchase["litoral"] == 181`,
			`group_days_since_last_purchase["norte"] != 0`, `group_days_since_last_purchase["nenhum"] > 1 || points > 200`,
			`group_purchases["norte"] in [1, 2]`, `level == "silver" && "norte" in group_purchases && group_purchases["norte"] >= 1`,
			`birthday_month == 0`, `birthday_month in [3, 4]`, `birthday_month > 6`,
			`city == ""`, `city == "Recife"`, `city != "São Paulo"`, `state == "PE"`, `state in ["PE", "SP"]`,
			`"email" in consents`, `"sms" in consents && !("whatsapp" in consents)`, `"nada" in consents`, `"data_sharing" in consents`,
			`churn_risk == "unknown"`, `churn_risk == "high"`, `churn_risk != "low"`, `churn_risk == ""`,
			`probability_alive == -1.0`, `probability_alive >= 0.5`, `probability_alive < 0`, `probability_alive > 0.2`,
			`"` + s.vip + `" in segments`, `!("` + s.vip + `" in segments)`, `"` + audience.ID + `" in segments`,
			// exists and all over the lists and maps the database knows.
			`consents.exists(c, c == "sms")`, `consents.all(c, c in ["sms", "email"])`, `!consents.exists(c, c.startsWith("whats"))`,
			`consents.exists(c, c.endsWith("ing") && level == "gold" || c.contains("ai") && points >= 100)`,
			`group_purchases.exists(g, group_purchases[g] >= 2)`, `group_purchases.all(g, g == "norte")`,
			`group_days_since_last_purchase.exists(g, group_days_since_last_purchase[g] <= 30 || group_purchases["sul"] >= 1)`,
			`group_days_since_last_purchase.all(g, group_purchases[g] >= 1 && group_days_since_last_purchase[g] > 181)`,
			`segments.exists(s, s == "` + s.vip + `")`, `segments.all(s, s != "` + s.vip + `")`,
			`segments.exists(s, s.startsWith("` + s.vip[:6] + `"))`, `segments.exists(s, s in ["x", "` + audience.ID + `"])`,
			`consents.exists(c, segments.exists(s, s == c)) || consents.all(c, "` + s.vip + `" in segments)`,
			// Not translated: evaluated in Go.
			`purchases * 2 >= 4`, `size(consents) >= 2`, `store_most_visited == "LOJA-N"`, `consents.exists(c, c == "sms")`,
			`city < "S"`, `group_purchases["norte"] + 1 >= 2`,
			`purchases == 0 ? true : level == "gold"`, `level == "gold" && points * 1 >= 0`,
		}
		for i, rule := range rules {
			p, err := s.a.Audiences.PreviewAudience(s.ctx, rule)
			require.NoError(t, err, rule)
			seg, err := s.a.Customers.CreateSegment(s.ctx, customers.SegmentInput{Name: opt.Of(fmt.Sprintf("Regra %d", i)).Ptr(), Rule: &rule})
			require.NoError(t, err, rule)
			want, err := seg.QueryCustomers().Order(ent.Asc(customer.FieldID)).IDs(s.ctx)
			require.NoError(t, err)
			assert.Equal(t, len(want), p.Count, "count of %s", rule)
			var got []string
			for _, m := range p.Sample {
				got = append(got, m.ID)
			}
			assert.Equal(t, want[:min(len(want), 10)], got, "sample of %s", rule)
		}
	})
}

// TestAudiencePreviewNotTranslated: a rule the preview does not translate
// into SQL previews what the same rule written in the subset does.
func TestAudiencePreviewNotTranslated(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		s := newVariedShop(t, db)
		for _, tc := range []struct{ translated, not string }{
			{`level == "gold"`, `level == "gold" && points * 1 >= 0`},
			{`purchases >= 2`, `purchases * 2 >= 4`},
			{`"sms" in consents`, `consents.exists(c, c.size() == 3)`},
		} {
			want, err := s.a.Audiences.PreviewAudience(s.ctx, tc.translated)
			require.NoError(t, err)
			require.Positive(t, want.Count, tc.translated)
			got, err := s.a.Audiences.PreviewAudience(s.ctx, tc.not)
			require.NoError(t, err)
			assert.Equal(t, want, got, tc.not)
		}
	})
}
