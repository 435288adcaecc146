package rest

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/graph/generated"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestPOSSaleValuesAddUp: a sale's values must add up within the tenant's
// tolerance (amountPayable = amount − discountAmount, discountAmount = the
// items' discounts, the payments = amountPayable) and earn no more than one
// credit may give; otherwise 422 sale-value-inconsistency naming the field,
// and nothing is stored. Before, amountPayable was never checked: a R$ 100
// sale payable R$ 999,999,999,999 credited as many points.
func TestPOSSaleValuesAddUp(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		huge := func(id string) map[string]any {
			b := posSaleBody(posN(id), nil)
			posSet(b, "sale.amount", posN("200000000000"))
			posSet(b, "sale.amountPayable", posN("200000000000"))
			posSet(b, "sale.items", []any{map[string]any{"id": "1", "gtin": posGTINA, "description": "Iate", "unitPrice": posN("200000000000"),
				"unitMeasure": "UN", "quantity": posN("1"), "discounts": []any{}}})
			return posSet(b, "sale.payments", []any{map[string]any{"id": posN("1"), "amount": posN("200000000000"), "method": "PIX"}})
		}
		cases := []struct {
			name, field string
			body        map[string]any
		}{
			{"amountPayable above amount", "sale.amountPayable", posSet(posSaleBody(posN("8001"), nil), "sale.amountPayable", posN("999999999999"))},
			{"amountPayable below amount", "sale.amountPayable", posSet(posSaleBody(posN("8002"), nil), "sale.amountPayable", posN("50.00"))},
			{"discountAmount without discounts", "sale.discountAmount", posSet(posSaleBody(posN("8003"), nil), "sale.discountAmount", posN("30.00"))},
			{"payments short", "sale.payments", posSet(posSaleBody(posN("8004"), nil), "sale.payments",
				[]any{map[string]any{"id": posN("1"), "amount": posN("10.00"), "method": "PIX"}})},
			{"more points than one credit gives", "sale.amountPayable", huge("8005")},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				m := posRequireProblem(t, e.posPost(t, "/sales", c.body), http.StatusUnprocessableEntity, "sale-value-inconsistency")
				require.Contains(t, m["detail"], c.field, "the problem names the field")
			})
		}
		require.Zero(t, e.db.Ent.Sale.Query().Where(sale.ExternalIDIn("8001", "8002", "8003", "8004", "8005")).CountX(posSys()))
		posRequireAccepted(t, e.posPost(t, "/sales", posSaleBody(posN("8010"), nil)), "8010", map[string]any{"id": posDefault, "type": nil})
	})
}

// TestSaleToleranceAsDescribed: the tenant's sale tolerance applies to each
// check of a sale's values, as its GraphQL descriptions say: a sale off by
// the tolerance in one check is accepted, one off by a cent more is refused
// naming that check's field, which each description names.
func TestSaleToleranceAsDescribed(t *testing.T) {
	t.Parallel()
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	descriptions := []string{
		schema.Types["Tenant"].Fields.ForName("saleTolerance").Description,
		schema.Types["TenantSettingsInput"].Fields.ForName("saleTolerance").Description,
	}
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		e.posSettings(t, backoffice.TenantSettings{SaleTolerance: posDecPtr("0.50")})
		receipt := 8100
		// off sends a sale (R$ 100.00 of items, no discount, paid in full)
		// with one check off by delta.
		off := func(check, delta string) map[string]any {
			receipt++
			b := posSaleBody(posN(strconv.Itoa(receipt)), nil)
			d := decimal.RequireFromString(delta)
			switch check {
			case "sale.amount":
				posSet(b, "sale.amount", posN(decimal.NewFromInt(100).Add(d).StringFixed(2)))
				posSet(b, "sale.amountPayable", posN(decimal.NewFromInt(100).Add(d).StringFixed(2)))
				posSet(b, "sale.payments.0.amount", posN(decimal.NewFromInt(100).Add(d).StringFixed(2)))
			case "sale.discountAmount":
				posSet(b, "sale.discountAmount", posN(d.StringFixed(2)))
				posSet(b, "sale.amountPayable", posN(decimal.NewFromInt(100).Sub(d).StringFixed(2)))
				posSet(b, "sale.payments.0.amount", posN(decimal.NewFromInt(100).Sub(d).StringFixed(2)))
			case "sale.amountPayable":
				posSet(b, "sale.amountPayable", posN(decimal.NewFromInt(100).Sub(d).StringFixed(2)))
				posSet(b, "sale.payments.0.amount", posN(decimal.NewFromInt(100).Sub(d).StringFixed(2)))
			case "sale.payments":
				posSet(b, "sale.payments.0.amount", posN(decimal.NewFromInt(100).Sub(d).StringFixed(2)))
			}
			return b
		}
		for _, check := range []string{"sale.amount", "sale.discountAmount", "sale.amountPayable", "sale.payments"} {
			t.Run(check, func(t *testing.T) {
				for _, d := range descriptions {
					require.Contains(t, d, strings.TrimPrefix(check, "sale."), "the description names the check")
				}
				r := e.posPost(t, "/sales", off(check, "0.50"))
				require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
				m := posRequireProblem(t, e.posPost(t, "/sales", off(check, "0.51")), http.StatusUnprocessableEntity, "sale-value-inconsistency")
				require.Contains(t, m["detail"], check)
			})
		}
	})
}
