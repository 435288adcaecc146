package rest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/privacy"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent/customerimport"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/schema/sealed"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestCustomerExportAndErasure: the data subject's export holds the profile
// unmasked, the ledger and the sales; erasure keeps balances and liability,
// leaves no copy of the name, e-mail, phone or document in any text column
// of any table, answers 404 after (GET, export, and no identify at the
// till), is idempotent, announces customer.erased, and frees the CPF for a
// new pre-registration.
func TestCustomerExportAndErasure(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		token := e.tokenFor(t, "customers:read", "customers:write", "loyalty:read", "loyalty:write", privacy.ScopePrivacyRead, privacy.ScopePrivacyWrite)
		doc := posCPF()
		formatted := posFormatCPF(doc)
		personal := []string{"Joana Erasmo", "joana.erasmo@example.com", "+5511912345678", doc, formatted}
		created := e.bearer(t, http.MethodPost, "/v1/customers", token, map[string]any{
			"name": personal[0], "email": personal[1], "phone": personal[2], "cpf": formatted, "birth_date": "1985-03-09",
			"address": map[string]any{"street": "Rua das Erasmo, 10", "city": "Campinas", "state": "SP", "zip_code": "13010-000"},
		})
		require.Equal(t, http.StatusCreated, created.status, "%s", created.body)
		id := created.obj(t)["id"].(string)
		credit := e.bearer(t, http.MethodPost, "/v1/points/credit", token, map[string]any{"customer_id": id, "order_id": "E-1", "amount": 150})
		require.Equal(t, http.StatusCreated, credit.status, "%s", credit.body)
		posRequireAccepted(t, e.posPost(t, "/sales", posSaleBody(posN("810"), map[string]any{"id": doc, "type": "CPF"})), "810",
			map[string]any{"id": doc, "type": "CPF"})
		posWork(t, e, e.posSaleID(t, "810"))
		card := e.bearer(t, http.MethodPost, "/v1/gift-cards", token, map[string]any{"amount": 25, "customer_id": id})
		require.Equal(t, http.StatusCreated, card.status, "%s", card.body)

		export := e.bearer(t, http.MethodGet, "/v1/customers/"+id+"/export", token, nil)
		require.Equal(t, http.StatusOK, export.status, "%s", export.body)
		var doc1 struct {
			ExportedAt string           `json:"exported_at"`
			Customer   map[string]any   `json:"customer"`
			Points     []map[string]any `json:"points_entries"`
			Sales      []map[string]any `json:"sales"`
			Redeemed   []map[string]any `json:"redemptions"`
			Wallets    []map[string]any `json:"wallet_entries"`
			GiftCards  []map[string]any `json:"gift_cards"`
		}
		require.NoError(t, json.Unmarshal(export.body, &doc1), "%s", export.body)
		require.Equal(t, doc, doc1.Customer["document"], "the data subject's copy is unmasked")
		require.Equal(t, personal[1], doc1.Customer["email"])
		require.Len(t, doc1.Points, 2, "the order's credit and the sale's")
		require.Len(t, doc1.Sales, 1)
		require.NotEmpty(t, doc1.Sales[0]["edges"].(map[string]any)["items"])
		require.NotNil(t, doc1.Redeemed)
		require.NotNil(t, doc1.Wallets, "the cashback wallet's entries, none here")
		require.Len(t, doc1.GiftCards, 1, "the card bound to the customer")
		require.Equal(t, "25", fmt.Sprint(doc1.GiftCards[0]["initial_cents"].(float64)/100))
		require.NotContains(t, doc1.GiftCards[0], "code_hash", "the card's code is not the customer's to export")

		ctx := e.posTenantCtx()
		balance := func() string {
			r := e.bearer(t, http.MethodGet, "/v1/points/balance/"+id, token, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			return string(r.body)
		}
		for _, v := range personal[:3] { // the scan finds what is there
			require.NotEmpty(t, occurrences(t, db, v), "%q is stored before the erasure", v)
		}
		for _, v := range personal[3:] {
			require.Empty(t, occurrences(t, db, v), "%q is sealed, never stored in clear", v)
		}
		docIndex := sealed.MustIndex(doc) // the sealed document's trace
		require.ElementsMatch(t, []string{"customers.document_index", "sales.customer_document_index"}, occurrences(t, db, docIndex))
		before, err := e.app.Loyalty.PointsLiability(ctx)
		require.NoError(t, err)
		balanceBefore := balance()
		// An import in progress holds the customer's line in its (sealed) file.
		upload, err := e.db.Ent.CustomerImport.Create().SetTenantID(e.tenantID).SetFormat(customerimport.FormatCsv).Save(posSys())
		require.NoError(t, err)
		otherLine := "52998224725,Outra Pessoa,outra@example.com\n"
		chunk, err := e.db.Ent.CustomerImportChunk.Create().SetTenantID(e.tenantID).SetImportID(upload.ID).SetSeq(0).
			SetData([]byte("cpf,name,email\n" + formatted + "," + personal[0] + "," + personal[1] + "\n" + otherLine)).Save(posSys())
		require.NoError(t, err)

		for range 2 { // idempotent
			r := e.bearer(t, http.MethodDelete, "/v1/customers/"+id, token, nil)
			require.Equal(t, http.StatusNoContent, r.status, "%s", r.body)
		}
		after, err := e.app.Loyalty.PointsLiability(ctx)
		require.NoError(t, err)
		require.Equal(t, before, after, "liability unchanged")
		require.Equal(t, balanceBefore, balance(), "the pseudonymous record keeps its points")
		for _, path := range []string{"/v1/customers/" + id, "/v1/customers/" + id + "/export"} {
			r := e.bearer(t, http.MethodGet, path, token, nil)
			require.Equal(t, http.StatusNotFound, r.status, "%s: %s", path, r.body)
		}
		list := e.bearer(t, http.MethodGet, "/v1/customers?search="+doc, token, nil)
		require.Equal(t, http.StatusOK, list.status)
		require.Empty(t, list.obj(t)["data"])
		r := e.posPost(t, "/customers/identify", posIdentifyBody("s-erased", doc, "CPF"))
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, "NOT_FOUND", r.obj(t)["customer"].(map[string]any)["status"])
		n, err := e.db.Ent.Event.Query().Where(event.TypeEQ(outbox.CustomerErased), event.SubjectID(id)).Count(posSys())
		require.NoError(t, err)
		require.Equal(t, 1, n, "one customer.erased event")

		for _, v := range append(personal, docIndex) {
			require.Empty(t, occurrences(t, db, v), "%q after the erasure", v)
		}
		file, err := e.db.Ent.CustomerImportChunk.Get(posSys(), chunk.ID)
		require.NoError(t, err)
		require.Equal(t, "cpf,name,email\n"+otherLine, string(file.Data), "the erased customer's line leaves the import's file")

		// The CPF is free: the till may pre-register it again.
		e.posSettings(t, backoffice.TenantSettings{PreRegistration: posBool(true)})
		r = e.posPost(t, "/customers/identify", posIdentifyBody("s-again", doc, "CPF"))
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, "PRE_REGISTER", r.obj(t)["customer"].(map[string]any)["status"])

		missing := e.bearer(t, http.MethodDelete, "/v1/customers/cus_00000000000000000000000000", token, nil)
		require.Equal(t, http.StatusNotFound, missing.status, "%s", missing.body)
		noScope := e.bearer(t, http.MethodDelete, "/v1/customers/"+id, e.tokenFor(t, "customers:write"), nil)
		require.Equal(t, http.StatusForbidden, noScope.status, "%s", noScope.body)
	})
}

// occurrences are the columns (table.column) of every table holding value
// in a text, JSON or bytes column.
func occurrences(t *testing.T, db *storage.DB, value string) []string {
	t.Helper()
	ctx := context.Background()
	columns := `SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema()
		AND data_type IN ('text', 'character varying', 'jsonb', 'json', 'bytea')`
	if db.Dialect == dialect.SQLite {
		columns = `SELECT m.name, p.name, p.type FROM sqlite_master m JOIN pragma_table_info(m.name) p
			WHERE m.type = 'table' AND m.name NOT LIKE 'customer_search%' AND m.name NOT LIKE 'sqlite_%'
			AND (p.type IN ('text', 'TEXT', 'json', 'JSON', 'blob', 'BLOB') OR p.type LIKE 'varchar%')`
	}
	rows, err := db.SQL.QueryContext(ctx, columns)
	require.NoError(t, err)
	type column struct{ table, name, typ string }
	var all []column
	for rows.Next() {
		var c column
		require.NoError(t, rows.Scan(&c.table, &c.name, &c.typ))
		all = append(all, c)
	}
	require.NoError(t, rows.Close())
	require.Greater(t, len(all), 50, "the scan sees the schema")
	var found []string
	for _, c := range all {
		text := `"` + c.name + `"`
		switch {
		case db.Dialect == dialect.SQLite:
			text = "CAST(" + text + " AS TEXT)"
		case c.typ == "bytea":
			text = "encode(" + text + ", 'escape')"
		default:
			text += "::text"
		}
		q := `SELECT count(*) FROM "` + c.table + `" WHERE ` + text + ` LIKE '%' || $1 || '%'`
		if db.Dialect == dialect.SQLite {
			q = strings.Replace(q, "$1", "?", 1)
		}
		var n int
		err := db.SQL.QueryRowContext(ctx, q, value).Scan(&n)
		if err == sql.ErrNoRows {
			continue
		}
		require.NoError(t, err, "%s.%s", c.table, c.name)
		if n > 0 {
			found = append(found, c.table+"."+c.name)
		}
	}
	return found
}

// TestAnonymizeInactiveCustomers: off by default; with the setting, the
// hourly purge erases the customers whose record has not changed for that
// many years, and only them.
func TestAnonymizeInactiveCustomers(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		old, recent := e.campCustomer(t, "Antigo"), e.campCustomer(t, "Recente")
		// Activity three years ago: the record last changed then.
		stale := time.Now().AddDate(-3, 0, 0).UTC()
		_, err := db.SQL.ExecContext(context.Background(), rebindFor(db, `UPDATE customers SET updated_at = ? WHERE id = ?`), stale, old)
		require.NoError(t, err)
		e.clock.Set(time.Now())
		erased := func(id string) bool {
			c, err := db.Ent.Customer.Get(e.ctx, id)
			require.NoError(t, err)
			return c.ErasedAt != nil
		}
		require.NoError(t, e.app.Privacy.PurgeExpired(context.Background(), jobs.PurgeExpired{}))
		require.False(t, erased(old), "off by default")

		user := viewer.NewContext(context.Background(), viewer.Viewer{Role: viewer.RoleAdmin, TenantID: e.tenantID, Subject: "ana@loja.example"})
		_, err = e.app.Backoffice.UpdateTenant(user, e.tenantID, backoffice.TenantSettings{AnonymizeInactiveYears: opt.Of(2).Ptr()})
		require.NoError(t, err)
		require.NoError(t, e.app.Privacy.PurgeExpired(context.Background(), jobs.PurgeExpired{}))
		require.True(t, erased(old))
		require.False(t, erased(recent))

		_, err = e.app.Backoffice.UpdateTenant(user, e.tenantID, backoffice.TenantSettings{AnonymizeInactiveYears: opt.Of(0).Ptr()})
		require.NoError(t, err)
		tn, err := db.Ent.Tenant.Get(e.ctx, e.tenantID)
		require.NoError(t, err)
		require.Nil(t, tn.AnonymizeInactiveYears, "0 turns it off")
	})
}

// rebindFor writes ? placeholders as the database wants them.
func rebindFor(db *storage.DB, q string) string {
	if db.Dialect == dialect.Postgres {
		return strings.Replace(strings.Replace(q, "?", "$1", 1), "?", "$2", 1)
	}
	return q
}
