package rest

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// posSaleBody is a valid sale of R$ 100.00 at posStore: two lines of R$ 50.
func posSaleBody(saleID any, cust any) map[string]any {
	m := map[string]any{
		"protocol": "PARTNER_V1",
		"sale": map[string]any{
			"id":             saleID,
			"store":          map[string]any{"id": posStore, "posId": "PDV-01", "employeeId": "OP-7", "sellerId": "V-3"},
			"posProvider":    "Linx",
			"channel":        "LOJA_FISICA",
			"date":           posDate,
			"amount":         posN("100.00"),
			"amountPayable":  posN("100.00"),
			"discountAmount": posN("0"),
			"items": []any{
				map[string]any{"id": "1", "gtin": posGTINA, "description": "Arroz 5 kg", "unitPrice": posN("25.00"),
					"unitMeasure": "UN", "quantity": posN("2"), "discounts": []any{}},
				map[string]any{"id": "2", "gtin": posGTINB, "description": "Feijão 1 kg", "unitPrice": posN("12.50"),
					"unitMeasure": "UN", "quantity": posN("4"), "discounts": []any{}},
			},
			"payments": []any{map[string]any{"id": posN("1"), "amount": posN("100.00"), "method": "CREDIT_CARD",
				"bin": "411111", "nsu": "000123", "installments": 3}},
			"fiscalDocument": map[string]any{"number": "123", "serialNumber": "1", "model": "65", "type": "NFCE",
				"url": "https://sefaz.example/nfce/123"},
		},
	}
	if cust != nil {
		m["customer"] = cust
	}
	return m
}

// posDiscounted puts a discount of the service on the first line of a sale
// body (R$ 5.00 on each of its 2 units) and sets the totals.
func posDiscounted(m map[string]any, promotionID string) map[string]any {
	posSet(m, "sale.items.0.discounts", []any{map[string]any{"promotionId": promotionID, "unitDiscount": posN("5.00"),
		"unitPriceWithDiscount": posN("20.00"), "quantity": posN("2")}})
	posSet(m, "sale.discountAmount", posN("10.00"))
	posSet(m, "sale.amountPayable", posN("90.00"))
	posSet(m, "sale.payments.0.amount", posN("90.00"))
	return m
}

func posRequireAccepted(t testing.TB, r posResp, saleID string, cust map[string]any) {
	t.Helper()
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	m := r.obj(t)
	require.Equal(t, []string{"customer", "messages", "sale"}, sortedKeys(m), "%s", r.body)
	require.Equal(t, cust, m["customer"], "%s", r.body)
	require.Equal(t, map[string]any{"id": posN(saleID), "status": "RECEIVED"}, m["sale"], "sale.id is echoed as a number")
	msgs := m["messages"].([]any)
	require.Len(t, msgs, 1)
	require.Equal(t, "SUCCESS", msgs[0].(map[string]any)["type"])
}

func TestPOSRegisterSale(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		doc := posCPF()
		e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		camp := e.posPercent(t, "Dez por cento", "10", []string{"pdv"})

		t.Run("identified customer", func(t *testing.T) {
			r := e.posPost(t, "/sales", posDiscounted(posSaleBody(posN("1001"), map[string]any{"id": posFormatCPF(doc), "type": "CPF"}), camp))
			posRequireAccepted(t, r, "1001", map[string]any{"id": doc, "type": "CPF"})
			s, err := e.db.Ent.Sale.Query().Where(sale.ExternalID("1001")).WithItems().WithPayments().Only(posSys())
			require.NoError(t, err)
			require.Equal(t, sale.StatusRECEIVED, s.Status)
			require.Equal(t, doc, s.CustomerDocument)
			require.Equal(t, "PDV-01", s.PosID)
			require.Equal(t, "LOJA_FISICA", s.Channel)
			require.True(t, s.Amount.Equal(decimal.NewFromInt(100)))
			require.True(t, s.AmountPayable.Equal(decimal.NewFromInt(90)))
			require.True(t, s.DiscountAmount.Equal(decimal.NewFromInt(10)))
			require.Equal(t, time.Date(2026, 3, 14, 13, 20, 30, 0, time.UTC), s.SoldAt.UTC())
			require.Len(t, s.Edges.Items, 2)
			require.Len(t, s.Edges.Payments, 1)
			require.Equal(t, 3, s.Edges.Payments[0].Installments)
			require.JSONEq(t, `{"number":"123","serialNumber":"1","model":"65","type":"NFCE","url":"https://sefaz.example/nfce/123"}`, string(s.FiscalDocument))
			require.Len(t, posJobs(t, e), 1, "the processing job is stored with the sale")
		})

		t.Run("the fiscal document is stored as its documented fields", func(t *testing.T) {
			// A lone surrogate and a number beyond PostgreSQL's numeric
			// would make jsonb refuse the raw document.
			raw := strings.Replace(string(posJSON(t, posSaleBody(posN("1003"), nil))), `"number":"123"`,
				`"number":"\ud800","extra":1e999999,"nested":{"a":[1,2]}`, 1)
			posRequireAccepted(t, e.posPost(t, "/sales", raw), "1003", map[string]any{"id": posDefault, "type": nil})
			s, err := e.db.Ent.Sale.Query().Where(sale.ExternalID("1003")).Only(posSys())
			require.NoError(t, err)
			require.JSONEq(t, `{"number":"\ufffd","serialNumber":"1","model":"65","type":"NFCE","url":"https://sefaz.example/nfce/123"}`, string(s.FiscalDocument))
			// Absent or null: none.
			for i, fd := range []any{nil, "null"} {
				body := posSaleBody(posN(strconv.Itoa(1004+i)), nil)
				delete(body["sale"].(map[string]any), "fiscalDocument")
				if fd == "null" {
					body["sale"].(map[string]any)["fiscalDocument"] = nil
				}
				posRequireAccepted(t, e.posPost(t, "/sales", body), strconv.Itoa(1004+i), map[string]any{"id": posDefault, "type": nil})
				s, err := e.db.Ent.Sale.Query().Where(sale.ExternalID(strconv.Itoa(1004 + i))).Only(posSys())
				require.NoError(t, err)
				require.Empty(t, s.FiscalDocument)
			}
		})

		t.Run("the earliest and latest dates", func(t *testing.T) {
			for i, date := range []string{"0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z", "2026-03-14T10:20:30.123456789+05:45"} {
				id := strconv.Itoa(1010 + i)
				posRequireAccepted(t, e.posPost(t, "/sales", posSet(posSaleBody(posN(id), nil), "sale.date", date)), id, map[string]any{"id": posDefault, "type": nil})
				s, err := e.db.Ent.Sale.Query().Where(sale.ExternalID(id)).Only(posSys())
				require.NoError(t, err)
				want, err := time.Parse(time.RFC3339Nano, date)
				require.NoError(t, err)
				require.Equal(t, want.UTC().Truncate(time.Microsecond), s.SoldAt.UTC().Truncate(time.Microsecond))
				require.Equal(t, http.StatusOK, e.posGet(t, "/sales/"+id).status)
			}
		})

		t.Run("CNPJ customer", func(t *testing.T) {
			r := e.posPost(t, "/sales", posSaleBody(posN("1002"), map[string]any{"id": "12.abc.345/01de-35", "type": "CNPJ"}))
			posRequireAccepted(t, r, "1002", map[string]any{"id": posCNPJAlfa, "type": "CNPJ"})
		})

		t.Run("unidentified customer", func(t *testing.T) {
			for i, cust := range []any{nil, "null", map[string]any{}, map[string]any{"id": nil}, map[string]any{"id": ""},
				map[string]any{"id": "", "type": "CPF"}, map[string]any{"id": posDefault, "type": nil}, map[string]any{"id": "000.000.000-00", "type": "CPF"}} {
				body := posSaleBody(posN(strconv.Itoa(2000+i)), nil)
				if cust == "null" {
					body["customer"] = nil
				} else if cust != nil {
					body["customer"] = cust
				}
				r := e.posPost(t, "/sales", body)
				posRequireAccepted(t, r, strconv.Itoa(2000+i), map[string]any{"id": posDefault, "type": nil})
				s, err := e.db.Ent.Sale.Query().Where(sale.ExternalID(strconv.Itoa(2000 + i))).Only(posSys())
				require.NoError(t, err)
				require.Equal(t, posDefault, s.CustomerDocument)
				require.Nil(t, s.CustomerDocumentType)
			}
		})

		t.Run("the default customer with discounts", func(t *testing.T) {
			for _, cust := range []any{nil, map[string]any{"id": posDefault, "type": "CPF"}, map[string]any{"id": "000.000.000-00"}} {
				r := e.posPost(t, "/sales", posDiscounted(posSaleBody(posN("3001"), cust), camp))
				posRequireProblem(t, r, http.StatusBadRequest, "validation-error", "customer.id")
			}
			// An external discount is a discount too.
			body := posSaleBody(posN("3002"), nil)
			posSet(body, "sale.items.0.discounts", []any{posExternal("1.00", "24.00", "1")})
			posRequireProblem(t, e.posPost(t, "/sales", body), http.StatusBadRequest, "validation-error", "customer.id")
		})

		t.Run("validation", func(t *testing.T) {
			before := e.posCounts(t)
			body := func() map[string]any { return posSaleBody(posN("5001"), map[string]any{"id": doc, "type": "CPF"}) }
			// one is a consistent sale of a single line at price (the
			// amounts match), with discounts.
			one := func(price string, discounts ...any) map[string]any {
				m := body()
				posSet(m, "sale.items", []any{map[string]any{"id": "1", "gtin": posGTINA, "description": "Lote",
					"unitPrice": posN(price), "quantity": posN("1"), "discounts": discounts}})
				for _, f := range []string{"sale.amount", "sale.amountPayable", "sale.payments.0.amount"} {
					posSet(m, f, posN(price))
				}
				return m
			}
			tenTimes := make([]any, 10)
			for i := range tenTimes {
				tenTimes[i] = map[string]any{"promotionId": camp, "unitDiscount": posN("900000000000"), "quantity": posN("1")}
			}
			cases := []struct {
				name  string
				body  any
				field string
			}{
				{"protocol missing", posDelete(body(), "protocol"), "protocol"},
				{"protocol of identify", posSet(body(), "protocol", "PARTNER"), "protocol"},
				{"sale missing", posDelete(body(), "sale"), "sale"},
				{"sale.id missing", posDelete(body(), "sale.id"), "sale.id"},
				{"sale.id a string", posSet(body(), "sale.id", "5001"), "sale.id"},
				{"sale.id negative", posSet(body(), "sale.id", posN("-5001")), "sale.id"},
				{"sale.id fractional", posSet(body(), "sale.id", posN("50.01")), "sale.id"},
				{"sale.id too long", posSet(body(), "sale.id", posN("123456789012345678901")), "sale.id"},
				{"sale.store missing", posDelete(body(), "sale.store"), "sale.store.id"},
				{"sale.store.id missing", posDelete(body(), "sale.store.id"), "sale.store.id"},
				{"sale.store.id blank", posSet(body(), "sale.store.id", " "), "sale.store.id"},
				{"sale.store.posId missing", posDelete(body(), "sale.store.posId"), "sale.store.posId"},
				{"sale.channel missing", posDelete(body(), "sale.channel"), "sale.channel"},
				{"sale.date missing", posDelete(body(), "sale.date"), "sale.date"},
				{"sale.date not ISO 8601", posSet(body(), "sale.date", "14/03/2026 10:20"), "sale.date"},
				{"sale.date in the year 10000 in UTC", posSet(body(), "sale.date", "9999-12-31T23:59:59.999-23:59"), "sale.date"},
				{"sale.date in the year -1 in UTC", posSet(body(), "sale.date", "0000-01-01T00:00:00+01:00"), "sale.date"},
				{"sale.amount missing", posDelete(body(), "sale.amount"), "sale.amount"},
				{"sale.amount zero", posSet(body(), "sale.amount", posN("0")), "sale.amount"},
				{"sale.amount negative", posSet(body(), "sale.amount", posN("-100.00")), "sale.amount"},
				{"sale.amount a string", posSet(body(), "sale.amount", "100.00"), "sale.amount"},
				{"sale.amount beyond numeric(20,8)", posSet(body(), "sale.amount", posN("1000000000000")), "sale.amount"},
				{"sale.amount with a huge exponent", posSet(body(), "sale.amount", posN("1E2147483647")), "sale.amount"},
				{"a consistent sale beyond numeric(20,8)", one("1000000000000"), "sale.amount"},
				{"a line beyond numeric(20,8)", one("1000000000000"), "sale.items[0].unitPrice"},
				{"discounts whose sum is beyond numeric(20,8)", one("900000000000", tenTimes...), "sale.items[0].discounts"},
				{"sale.amountPayable missing", posDelete(body(), "sale.amountPayable"), "sale.amountPayable"},
				{"sale.amountPayable zero", posSet(body(), "sale.amountPayable", posN("0")), "sale.amountPayable"},
				{"sale.discountAmount negative", posSet(body(), "sale.discountAmount", posN("-1")), "sale.discountAmount"},
				{"sale.items missing", posDelete(body(), "sale.items"), "sale.items"},
				{"sale.items empty", posSet(body(), "sale.items", []any{}), "sale.items"},
				{"items[].id missing", posDelete(body(), "sale.items.1.id"), "sale.items[1].id"},
				{"items[].gtin missing", posDelete(body(), "sale.items.0.gtin"), "sale.items[0].gtin"},
				{"items[].description missing", posDelete(body(), "sale.items.0.description"), "sale.items[0].description"},
				{"items[].unitPrice missing", posDelete(body(), "sale.items.0.unitPrice"), "sale.items[0].unitPrice"},
				{"items[].unitPrice zero", posSet(body(), "sale.items.0.unitPrice", posN("0")), "sale.items[0].unitPrice"},
				{"items[].unitPrice negative", posSet(body(), "sale.items.0.unitPrice", posN("-25")), "sale.items[0].unitPrice"},
				{"items[].quantity missing", posDelete(body(), "sale.items.0.quantity"), "sale.items[0].quantity"},
				{"items[].quantity zero", posSet(body(), "sale.items.0.quantity", posN("0")), "sale.items[0].quantity"},
				{"items[].quantity negative", posSet(body(), "sale.items.1.quantity", posN("-4")), "sale.items[1].quantity"},
				{"discounts[].promotionId missing", posDelete(posDiscounted(body(), camp), "sale.items.0.discounts.0.promotionId"), "sale.items[0].discounts[0].promotionId"},
				{"discounts[].quantity missing", posDelete(posDiscounted(body(), camp), "sale.items.0.discounts.0.quantity"), "sale.items[0].discounts[0].quantity"},
				{"discounts[].unitDiscount missing", posDelete(posDiscounted(body(), camp), "sale.items.0.discounts.0.unitDiscount"), "sale.items[0].discounts[0].unitDiscount"},
				{"discounts[].unitDiscount negative", posSet(posDiscounted(body(), camp), "sale.items.0.discounts.0.unitDiscount", posN("-5")), "sale.items[0].discounts[0].unitDiscount"},
				{"discounts[].unitDiscount above the unit price", posSet(posDiscounted(body(), camp), "sale.items.0.discounts.0.unitDiscount", posN("25.01")), "sale.items[0].discounts[0].unitDiscount"},
				{"discounts[].quantity above the item's", posSet(posDiscounted(body(), camp), "sale.items.0.discounts.0.quantity", posN("3")), "sale.items[0].discounts[0].quantity"},
				{"discounts adding up to more than the item", posSet(posDiscounted(body(), camp), "sale.items.0.discounts",
					[]any{posExternal("20", "5", "2"), map[string]any{"promotionId": camp, "unitDiscount": posN("20"), "quantity": posN("2")}}), "sale.items[0].discounts"},
				{"sale.payments missing", posDelete(body(), "sale.payments"), "sale.payments"},
				{"sale.payments empty", posSet(body(), "sale.payments", []any{}), "sale.payments"},
				{"payments[].id missing", posDelete(body(), "sale.payments.0.id"), "sale.payments[0].id"},
				{"payments[].id a string", posSet(body(), "sale.payments.0.id", "1"), "sale.payments.id"},
				{"payments[].amount missing", posDelete(body(), "sale.payments.0.amount"), "sale.payments[0].amount"},
				{"payments[].amount zero", posSet(body(), "sale.payments.0.amount", posN("0")), "sale.payments[0].amount"},
				{"payments[].method missing", posDelete(body(), "sale.payments.0.method"), "sale.payments[0].method"},
				{"payments[].installments fractional", posSet(body(), "sale.payments.0.installments", posN("1.5")), "sale.payments.installments"},
				{"fiscalDocument not an object", posSet(body(), "sale.fiscalDocument", posN("1e999999")), "sale.fiscalDocument"},
				{"fiscalDocument number not a string", posSet(body(), "sale.fiscalDocument.number", posN("123")), "sale.fiscalDocument.number"},
				{"customer.id invalid", posSet(body(), "customer.id", "529.982.247-24"), "customer.id"},
				{"customer.type invalid", posSet(body(), "customer.type", "RG"), "customer.type"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					posRequireProblem(t, e.posPost(t, "/sales", c.body), http.StatusBadRequest, "validation-error", c.field)
				})
			}
			require.Equal(t, before, e.posCounts(t), "no refused sale stored anything")
		})

		t.Run("total against sale.amount", func(t *testing.T) {
			// The items add up to R$ 100.00; the default tolerance is R$ 0.10.
			amount := func(id, amount string) map[string]any {
				return posSet(posSaleBody(posN(id), nil), "sale.amount", posN(amount))
			}
			for _, a := range []string{"100.11", "99.89", "150", "0.01"} {
				r := e.posPost(t, "/sales", amount("6001", a))
				m := posRequireProblem(t, r, http.StatusUnprocessableEntity, "sale-value-inconsistency")
				require.NotContains(t, m, "errors")
			}
			for i, a := range []string{"100.10", "99.90", "100.00", "100.05"} {
				posRequireAccepted(t, e.posPost(t, "/sales", amount(strconv.Itoa(6010+i), a)), strconv.Itoa(6010+i), map[string]any{"id": posDefault, "type": nil})
			}
			e.posSettings(t, backoffice.TenantSettings{SaleTolerance: posDecPtr("0.50")})
			defer e.posSettings(t, backoffice.TenantSettings{SaleTolerance: posDecPtr("0.10")})
			posRequireAccepted(t, e.posPost(t, "/sales", amount("6020", "100.40")), "6020", map[string]any{"id": posDefault, "type": nil})
			posRequireAccepted(t, e.posPost(t, "/sales", amount("6021", "99.50")), "6021", map[string]any{"id": posDefault, "type": nil})
			posRequireProblem(t, e.posPost(t, "/sales", amount("6022", "100.51")), http.StatusUnprocessableEntity, "sale-value-inconsistency")
			require.Zero(t, e.db.Ent.Sale.Query().Where(sale.ExternalIDIn("6001", "6022")).CountX(posSys()))
		})

		t.Run("unknown store", func(t *testing.T) {
			for _, code := range []string{"LJ999", "lj001", strings.Repeat("X", 300)} {
				r := e.posPost(t, "/sales", posSet(posSaleBody(posN("7001"), nil), "sale.store.id", code))
				posRequireProblem(t, r, http.StatusNotFound, "resource-not-found")
			}
		})

		t.Run("registration disabled", func(t *testing.T) {
			e.posSettings(t, backoffice.TenantSettings{SaleRegistration: posBool(false)})
			r := e.posPost(t, "/sales", posSaleBody(posN("7101"), nil))
			e.posSettings(t, backoffice.TenantSettings{SaleRegistration: posBool(true)})
			posRequireProblem(t, r, http.StatusServiceUnavailable, "sale-notification-disabled")
			require.Zero(t, e.db.Ent.Sale.Query().Where(sale.ExternalID("7101")).CountX(posSys()))
		})

		t.Run("the same receipt twice", func(t *testing.T) {
			queued := len(posJobs(t, e))
			cust := map[string]any{"id": doc, "type": "CPF"}
			for range 2 {
				posRequireAccepted(t, e.posPost(t, "/sales", posSaleBody(posN("8001"), cust)), "8001", map[string]any{"id": doc, "type": "CPF"})
			}
			require.Equal(t, 1, e.db.Ent.Sale.Query().Where(sale.ExternalID("8001")).CountX(posSys()), "one sale")
			require.Len(t, posJobs(t, e), queued+1, "processed once")
			// Concurrent resends are one sale as well.
			var wg sync.WaitGroup
			codes := make([]int, 6)
			for i := range codes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					codes[i] = e.posPost(t, "/sales", posSaleBody(posN("8002"), cust)).status
				}()
			}
			wg.Wait()
			for _, c := range codes {
				require.Equal(t, http.StatusAccepted, c)
			}
			require.Equal(t, 1, e.db.Ent.Sale.Query().Where(sale.ExternalID("8002")).CountX(posSys()))
			require.Len(t, posJobs(t, e), queued+2)

			// The same number from another store is another sale.
			_, err := e.app.Backoffice.CreateStore(posSys(), e.tenantID, posStore2, "Loja Shopping")
			require.NoError(t, err)
			posRequireAccepted(t, e.posPost(t, "/sales", posSet(posSaleBody(posN("8001"), cust), "sale.store.id", posStore2)),
				"8001", map[string]any{"id": doc, "type": "CPF"})
			require.Equal(t, 2, e.db.Ent.Sale.Query().Where(sale.ExternalID("8001")).CountX(posSys()))
			require.Len(t, posJobs(t, e), queued+3)

			r := e.posGet(t, "/sales/8001")
			posRequireProblem(t, r, http.StatusBadRequest, "validation-error", "storeId")
			r = e.posGet(t, "/sales/8001?storeId="+posStore2)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			require.Equal(t, map[string]any{"id": posStore2}, r.obj(t)["sale"].(map[string]any)["store"])
		})
	})
}
