package rest

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

func posJSON(t testing.TB, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return raw
}

// ---------------------------------------------------------------------------
// Authorize discounts

func posItem(id, gtin, unitPrice, quantity string, kv ...any) map[string]any {
	m := map[string]any{"id": id, "gtin": gtin, "unitPrice": posN(unitPrice), "unitMeasure": "UN",
		"quantity": posN(quantity), "ignoreDiscount": false, "discounts": []any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// posExternal is a discount the point of sale gave itself.
func posExternal(unitDiscount, unitPriceWithDiscount, quantity string) map[string]any {
	return map[string]any{"promotionId": "PARCEIRO-77", "partnerPromotionId": "0", "unitDiscount": posN(unitDiscount),
		"unitPriceWithDiscount": posN(unitPriceWithDiscount), "quantity": posN(quantity)}
}

func posAuthorizeBody(cust any, items ...map[string]any) map[string]any {
	list := make([]any, len(items))
	for i, it := range items {
		list[i] = it
	}
	m := map[string]any{
		"sessionId": "sess-auth", "protocol": "PARTNER",
		"sale": map[string]any{
			"id": "TK-991", "store": map[string]any{"id": posStore, "posId": "PDV-01", "employeeId": "OP-7"},
			"date": posDate, "amount": posN("54.00"), "ignoreDiscount": false, "items": list,
		},
	}
	if cust != nil {
		m["customer"] = cust
	}
	return m
}

// posDecimals matches a JSON number of at most 8 decimal places.
var posDecimals = regexp.MustCompile(`^-?\d+(\.\d{1,8})?$`)

// posRequireDecimals checks every number of the answer's discounts has at
// most 8 decimal places, reading the raw body.
func posRequireDecimals(t testing.TB, r posResp) {
	t.Helper()
	var raw struct {
		Sale struct {
			Items []struct {
				UnitPrice json.RawMessage
				Quantity  json.RawMessage
				Discounts []map[string]json.RawMessage
			}
		}
	}
	require.NoError(t, json.Unmarshal(r.body, &raw))
	for _, it := range raw.Sale.Items {
		for _, n := range []json.RawMessage{it.UnitPrice, it.Quantity} {
			require.Regexp(t, posDecimals, string(n))
		}
		for _, d := range it.Discounts {
			for _, k := range []string{"unitDiscount", "unitPriceWithDiscount", "quantity"} {
				if v, ok := d[k]; ok {
					require.Regexp(t, posDecimals, string(v), "%s of %s", k, r.body)
				}
			}
		}
	}
}

func TestPOSAuthorize(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		doc := posCPF()
		e.posCustomer(t, doc, posCust{name: "Ana Souza", email: "ana@example.com", phone: "+5511987654321", birth: "1990-01-01"})
		pre := posCPF()
		e.posCustomer(t, pre, posCust{phone: "+5511900000000"}) // pre-registered: no name
		c10 := e.posPercent(t, "Dez por cento no PDV", "10", []string{"pdv"})
		c20 := e.posPercent(t, "Vinte no feijão", "20", []string{"pdv"}, posGTINB)
		c33 := e.posPercent(t, "Um terço na granel", "33.333", []string{"pdv"}, posGTINE)
		e.posPercent(t, "Metade só na loja virtual", "50", []string{"ecommerce"})
		e.posCampaign(t, campaigns.CampaignInput{Name: "Pontos em dobro", Type: "bonus_points", Channels: []string{"pdv"},
			Discount: &campaigns.DiscountInput{Multiplier: posDecPtr("2")}})
		e.posCampaign(t, campaigns.CampaignInput{Name: "Frete grátis", Channels: []string{"pdv"},
			Discount: &campaigns.DiscountInput{Mode: "free_shipping"}})
		pausedStart := time.Now().Add(time.Hour)
		e.posCampaign(t, campaigns.CampaignInput{Name: "Ainda não começou", Channels: []string{"pdv"}, StartsAt: &pausedStart,
			Discount: &campaigns.DiscountInput{Mode: "percentage", Value: posDecPtr("90")}})

		cart := func() []map[string]any {
			return []map[string]any{
				posItem("1", posGTINA, "10.00", "2"),
				posItem("2", posGTINB, "5.00", "1"),
				posItem("3", posGTINC, "3.00", "1", "ignoreDiscount", true),
				posItem("4", posGTIND, "10.00", "1", "discounts", []any{posExternal("1.00", "9.00", "1")}),
				posItem("5", posGTINE, "3.99", "0.755", "unitMeasure", "KG"),
				posItem("6", posGTINF, "2.00", "1", "discounts", []any{posExternal("2.00", "0", "1")}),
			}
		}
		external := func(unit, after string) map[string]any {
			return map[string]any{"promotionId": nil, "partnerPromotionId": "0", "unitDiscount": posN(unit),
				"unitPriceWithDiscount": posN(after), "quantity": posN("1")}
		}
		service := func(id, unit, after, qty string) map[string]any {
			return map[string]any{"promotionId": id, "unitDiscount": posN(unit), "unitPriceWithDiscount": posN(after), "quantity": posN(qty)}
		}
		item := func(it map[string]any, discounts ...map[string]any) map[string]any {
			out := map[string]any{}
			for k, v := range it {
				out[k] = v
			}
			list := []any{}
			for _, d := range discounts {
				list = append(list, d)
			}
			out["discounts"] = list
			return out
		}
		in := cart()
		wantItems := []any{
			item(in[0], service(c10, "1.00", "9.00", "2")),
			item(in[1], service(c20, "1.00", "4.00", "1")), // 20% beats 10%
			item(in[2]), // ignoreDiscount: untouched
			item(in[3], external("1.00", "9.00"), service(c10, "0.90", "8.10", "1")), // on the price after the external one
			item(in[4], service(c33, "1.3299867", "2.6600133", "0.755")),             // 33.333% beats 10%
			item(in[5], external("2.00", "0")),                                       // nothing left to discount
		}

		for _, path := range []string{"/discounts/authorizations", "/discounts/authorize"} {
			t.Run(path, func(t *testing.T) {
				before := e.posCounts(t)
				r := e.posPost(t, path, posAuthorizeBody(map[string]any{"id": posFormatCPF(doc), "type": "CPF"}, cart()...))
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
				require.Equal(t, "application/json", r.header.Get("Content-Type"))
				m := r.obj(t)
				require.Equal(t, []string{"customer", "messages", "sale", "sessionId"}, sortedKeys(m))
				require.Equal(t, "sess-auth", m["sessionId"])
				require.Equal(t, map[string]any{"id": doc}, m["customer"])
				sl := m["sale"].(map[string]any)
				require.Equal(t, []string{"amount", "date", "items", "store", "ticketId"}, sortedKeys(sl))
				require.Equal(t, "TK-991", sl["ticketId"])
				require.Equal(t, posDate, sl["date"])
				require.Equal(t, posN("54.00"), sl["amount"])
				require.Equal(t, map[string]any{"id": posStore, "posId": "PDV-01", "employeeId": "OP-7"}, sl["store"])
				require.Equal(t, posNorm(wantItems), posNorm(sl["items"]), "%s", r.body)
				require.Equal(t, []any{map[string]any{"type": "SUCCESS", "content": "4 discount(s) authorized"}}, m["messages"])
				posRequireDecimals(t, r)
				require.Equal(t, before, e.posCounts(t), "authorizing stores nothing")
			})
		}

		t.Run("no discounts", func(t *testing.T) {
			plain := func() []map[string]any {
				return []map[string]any{posItem("1", posGTINA, "10.00", "2"),
					posItem("2", posGTIND, "10.00", "1", "discounts", []any{posExternal("1.00", "9.00", "1")})}
			}
			want := []any{item(plain()[0]), item(plain()[1], external("1.00", "9.00"))}
			unknown := posCPF()
			cases := []struct {
				name     string
				body     map[string]any
				customer any // the answer's customer; nil: absent
			}{
				{"no customer", posAuthorizeBody(nil, plain()...), nil},
				{"customer null", posSet(posAuthorizeBody(nil, plain()...), "customer", nil), nil},
				{"customer.id null", posAuthorizeBody(map[string]any{"id": nil}, plain()...), nil},
				{"customer.id empty", posAuthorizeBody(map[string]any{"id": "", "type": "CPF"}, plain()...), nil},
				{"unknown customer", posAuthorizeBody(map[string]any{"id": unknown, "type": "CPF"}, plain()...), map[string]any{"id": unknown}},
				{"pre-registered customer", posAuthorizeBody(map[string]any{"id": pre, "type": "CPF"}, plain()...), map[string]any{"id": pre}},
				{"sale.ignoreDiscount", posSet(posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"}, plain()...), "sale.ignoreDiscount", true), map[string]any{"id": doc}},
				{"every item ignoreDiscount", posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"},
					posItem("1", posGTINA, "10.00", "2", "ignoreDiscount", true)), map[string]any{"id": doc}},
				{"an item that already carries a service discount", posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"},
					posItem("1", posGTINA, "10.00", "2", "discounts", []any{map[string]any{"promotionId": c10, "unitDiscount": posN("1"), "unitPriceWithDiscount": posN("9"), "quantity": posN("2")}})),
					map[string]any{"id": doc}},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					before := e.posCounts(t)
					r := e.posPost(t, "/discounts/authorizations", c.body)
					require.Equal(t, http.StatusOK, r.status, "%s", r.body)
					m := r.obj(t)
					if c.customer == nil {
						require.NotContains(t, m, "customer")
					} else {
						require.Equal(t, c.customer, m["customer"])
					}
					items := m["sale"].(map[string]any)["items"].([]any)
					switch c.name {
					case "every item ignoreDiscount":
						require.Equal(t, posNorm([]any{item(posItem("1", posGTINA, "10.00", "2", "ignoreDiscount", true))}), posNorm(items))
					case "an item that already carries a service discount":
						require.Len(t, items, 1)
						ds := items[0].(map[string]any)["discounts"].([]any)
						require.Len(t, ds, 1, "the service discount is not given twice")
						require.Equal(t, c10, ds[0].(map[string]any)["promotionId"])
					default:
						require.Equal(t, posNorm(want), posNorm(items), "the same cart, no suggested discount")
					}
					msgs := m["messages"].([]any)
					require.Len(t, msgs, 1)
					require.Equal(t, "INFO", msgs[0].(map[string]any)["type"])
					require.NotEmpty(t, msgs[0].(map[string]any)["content"])
					require.Equal(t, before, e.posCounts(t))
				})
			}
		})

		t.Run("an ecommerce-only campaign never reaches the POS", func(t *testing.T) {
			// Only the 50% campaign for ecommerce would apply to GTIN C.
			other := posSetup(t, db) // a second tenant over the same database
			cust := posCPF()
			other.posCustomer(t, cust, posCust{name: "Davi"})
			other.posPercent(t, "Só e-commerce", "50", []string{"ecommerce"})
			r := other.posPost(t, "/discounts/authorize", posAuthorizeBody(map[string]any{"id": cust, "type": "CPF"}, posItem("1", posGTINC, "8.00", "1")))
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			m := r.obj(t)
			require.Empty(t, m["sale"].(map[string]any)["items"].([]any)[0].(map[string]any)["discounts"])
			require.Equal(t, "INFO", m["messages"].([]any)[0].(map[string]any)["type"])
			// A campaign for every channel does reach it.
			all := other.posCampaign(t, campaigns.CampaignInput{Name: "Todos os canais",
				Discount: &campaigns.DiscountInput{Mode: "fixed_amount", Value: posDecPtr("1.50")}})
			r = other.posPost(t, "/discounts/authorize", posAuthorizeBody(map[string]any{"id": cust, "type": "CPF"}, posItem("1", posGTINC, "8.00", "2")))
			ds := r.obj(t)["sale"].(map[string]any)["items"].([]any)[0].(map[string]any)["discounts"].([]any)
			require.Equal(t, posNorm([]any{service(all, "0.75", "7.25", "2")}), posNorm(ds), "R$ 1.50 over 2 units")
			// The campaigns of the first tenant never reach the second.
			r = other.posPost(t, "/discounts/authorize", posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"}, posItem("1", posGTINA, "10.00", "1")))
			require.Equal(t, "INFO", r.obj(t)["messages"].([]any)[0].(map[string]any)["type"], "%s", r.body)
		})

		t.Run("validation", func(t *testing.T) {
			body := func() map[string]any {
				return posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"}, posItem("1", posGTINA, "10.00", "2"))
			}
			cases := []struct {
				name  string
				body  any
				field string
			}{
				{"sessionId missing", posDelete(body(), "sessionId"), "sessionId"},
				{"sale missing", posDelete(body(), "sale"), "sale"},
				{"sale null", posSet(body(), "sale", nil), "sale"},
				{"sale.store.id missing", posDelete(body(), "sale.store.id"), "sale.store.id"},
				{"sale.date missing", posDelete(body(), "sale.date"), "sale.date"},
				{"sale.date without offset", posSet(body(), "sale.date", "2026-03-14T10:20:30"), "sale.date"},
				{"sale.date a date only", posSet(body(), "sale.date", "2026-03-14"), "sale.date"},
				{"sale.items missing", posDelete(body(), "sale.items"), "sale.items"},
				{"sale.items empty", posSet(body(), "sale.items", []any{}), "sale.items"},
				{"sale.items not an array", posSet(body(), "sale.items", map[string]any{}), "sale.items"},
				{"gtin missing", posDelete(body(), "sale.items.0.gtin"), "sale.items[0].gtin"},
				{"unitPrice missing", posDelete(body(), "sale.items.0.unitPrice"), "sale.items[0].unitPrice"},
				{"unitPrice negative", posSet(body(), "sale.items.0.unitPrice", posN("-1")), "sale.items[0].unitPrice"},
				{"unitPrice a string", posSet(body(), "sale.items.0.unitPrice", "10.00"), "sale.items.unitPrice"},
				{"unitMeasure missing", posDelete(body(), "sale.items.0.unitMeasure"), "sale.items[0].unitMeasure"},
				{"quantity missing", posDelete(body(), "sale.items.0.quantity"), "sale.items[0].quantity"},
				{"quantity zero", posSet(body(), "sale.items.0.quantity", posN("0")), "sale.items[0].quantity"},
				{"quantity out of range", posSet(body(), "sale.items.0.quantity", posN("1e400")), "sale.items[0].quantity"},
				{"quantity with a huge exponent", posSet(body(), "sale.items.0.quantity", posN("1e999999999")), "sale.items[0].quantity"},
				{"unitPrice with a tiny exponent", posSet(body(), "sale.items.0.unitPrice", posN("1e-999999999")), "sale.items[0].unitPrice"},
				{"unitPrice of 100 digits", posSet(body(), "sale.items.0.unitPrice", posN("1"+strings.Repeat("0", 99))), "sale.items[0].unitPrice"},
				{"quantity of 100 decimals", posSet(body(), "sale.items.0.quantity", posN("0."+strings.Repeat("3", 100))), "sale.items[0].quantity"},
				{"sale.date in the year 10000 in UTC", posSet(body(), "sale.date", "9999-12-31T23:59:59-23:59"), "sale.date"},
				{"sale.amount a string", posSet(body(), "sale.amount", "54.00"), "sale.amount"},
				{"customer.type missing with an id", posDelete(body(), "customer.type"), "customer.type"},
				{"customer.type not CPF or CNPJ", posSet(body(), "customer.type", "PASSPORT"), "customer.type"},
				{"invalid CPF", posSet(body(), "customer.id", "529.982.247-24"), "customer.id"},
				{"invalid CNPJ", posSet(posSet(body(), "customer.type", "CNPJ"), "customer.id", "11.222.333/0001-80"), "customer.id"},
				{"customer.id over 18 characters", posSet(body(), "customer.id", "0000000000000000000052998224725"), "customer.id"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					for _, path := range []string{"/discounts/authorizations", "/discounts/authorize"} {
						posRequireProblem(t, e.posPost(t, path, c.body), http.StatusBadRequest, "validation-error", c.field)
					}
				})
			}
		})
	})
}

// ---------------------------------------------------------------------------
// Register sale
