package rest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/document/documenttest"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestDocumentCasesOnEveryInterface (issue 21) sends every case of the
// document table through the interfaces that take a document: POS identify
// (CPF and CNPJ) and /v1 customer creation (CPF). A valid document is
// accepted (identify answers 200; creation 201, or 409 for a CPF an earlier
// case registered); any other is refused on its field.
func TestDocumentCasesOnEveryInterface(t *testing.T) {
	t.Parallel()
	e := posSetup(t, storagetest.Open(t, dialect.SQLite))
	token := e.tokenFor(t, "customers:write")
	cases := documenttest.LoadCases(t, "../"+documenttest.Path)
	require.GreaterOrEqual(t, len(cases), 300)
	var pos, v1 int
	for i, c := range cases {
		r := e.posPost(t, "/customers/identify", posIdentifyBody(fmt.Sprint("case-", i), c.Input, string(c.Kind)))
		if c.Valid() {
			require.Equal(t, http.StatusOK, r.status, "identify %s %q: %s", c.Kind, c.Input, r.body)
		} else {
			posRequireProblem(t, r, http.StatusBadRequest, "validation-error", "customer.id")
		}
		pos++
		if c.Kind != document.CPF {
			continue
		}
		body, err := json.Marshal(map[string]any{"name": "Caso Documento", "email": fmt.Sprintf("caso%d@example.com", i), "cpf": c.Input})
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/v1/customers", strings.NewReader(string(body)))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := e.srv.Client().Do(req)
		require.NoError(t, err)
		raw, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		if c.Valid() {
			require.Contains(t, []int{http.StatusCreated, http.StatusConflict}, res.StatusCode, "create %q: %s", c.Input, raw)
		} else {
			require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, "create %q: %s", c.Input, raw)
			require.Contains(t, string(raw), `"field":"cpf"`, "create %q", c.Input)
		}
		v1++
	}
	t.Logf("%d cases through POS identify, %d through POST /v1/customers", pos, v1)
}
