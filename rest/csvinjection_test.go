package rest

import (
	"encoding/csv"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// formulas are cells a spreadsheet would run, each with what the service
// writes instead: the same text after a single quote.
var formulas = []string{`=HYPERLINK("http://evil.invalid","Clique")`, "+1+2", "-2+3", "@SUM(1,2)", "\tTAB", "\rCR"}

// requireNeutralized fails unless every cell of the CSV body that holds
// one of formulas holds it after a single quote, and no cell begins a
// formula.
func requireNeutralized(t *testing.T, body []byte, want int) {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	require.NoError(t, err, "%s", body)
	found := 0
	for _, row := range rows {
		for _, cell := range row {
			if cell != "" {
				require.NotContains(t, "=+-@\t\r", cell[:1], "a cell begins a formula: %q", cell)
			}
			for _, f := range formulas {
				if cell == "'"+f {
					found++
				}
			}
		}
	}
	require.Equal(t, want, found, "%s", body)
}

// TestCSVNeutralizesFormulas: the CSV answers (the coupon export, an
// import's problems) write a cell that a spreadsheet would read as a
// formula after a single quote.
func TestCSVNeutralizesFormulas(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		token := e.tokenFor(t, campScopeRead, campScopeWrite, "customers:read", "customers:write")

		t.Run("coupon export", func(t *testing.T) {
			camp := e.posCampaign(t, campaigns.CampaignInput{Name: "Cupom", Channels: []string{"ecommerce"}, RequiresCode: true,
				Discount: &campaigns.DiscountInput{Mode: "percentage", Value: posDecPtr("15")}})
			for i, note := range formulas {
				res := e.bearer(t, http.MethodPost, "/v1/campaigns/"+camp+"/coupons", token,
					map[string]any{"codes": []string{"NOTA-" + string(rune('A'+i))}, "note": note})
				require.Equal(t, http.StatusCreated, res.status, "%s", res.body)
			}
			res := e.bearer(t, http.MethodGet, "/v1/campaigns/"+camp+"/coupons?format=csv", token, nil)
			require.Equal(t, http.StatusOK, res.status, "%s", res.body)
			requireNeutralized(t, res.body, len(formulas))
		})

		t.Run("import problems", func(t *testing.T) {
			res := (&campEnv{TestEnv: e.TestEnv}).campDo(t, http.MethodPost, "/v1/customers/imports", token, `{"name": 1}`+"\n",
				"Content-Type", "application/x-ndjson")
			require.Equal(t, http.StatusAccepted, res.status, "%s", res.body)
			id := res.obj(t)["id"].(string)
			ctx := e.posTenantCtx()
			require.NoError(t, e.app.Customers.RunCustomerImport(ctx, jobs.ImportCustomers{TenantID: e.tenantID, ImportID: id}))
			// A problem's text is the service's own; were it ever to carry
			// what a row held, it would be written as text all the same.
			for i, f := range formulas {
				require.NoError(t, e.db.Ent.CustomerImportProblem.Create().SetImportID(id).SetLine(2+i).SetField(f).SetMessage(f).Exec(ctx))
			}
			res = e.bearer(t, http.MethodGet, "/v1/customers/imports/"+id+"/problems", token, nil)
			require.Equal(t, http.StatusOK, res.status, "%s", res.body)
			requireNeutralized(t, res.body, 2*len(formulas))
		})
	})
}
