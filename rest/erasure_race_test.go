package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/privacy"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/worker"
)

// raceResp is an answer to a request sent from a goroutine of a race.
type raceResp struct {
	status int
	body   []byte
	err    error
}

// raceDo sends one request without failing the test from its goroutine.
func (e *TestEnv) raceDo(method, path, token string, body any) raceResp {
	var rd io.Reader
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			return raceResp{err: err}
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		return raceResp{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		return raceResp{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return raceResp{status: res.StatusCode, body: b, err: err}
}

// requireScrubbed checks that an erased customer's row holds no personal
// data: identity fields empty, the document a pseudonym.
func requireScrubbed(t *testing.T, db *storage.DB, id string) {
	t.Helper()
	c, err := db.Ent.Customer.Get(posSys(), id)
	require.NoError(t, err)
	require.NotNil(t, c.ErasedAt, "%s is erased", id)
	require.Empty(t, c.Name, "name of %s", id)
	for field, v := range map[string]*string{"email": c.Email, "phone": c.Phone, "birth_date": c.BirthDate,
		"external_id": c.ExternalID, "address.street": c.AddressStreet, "address.city": c.AddressCity,
		"address.state": c.AddressState, "address.zip_code": c.AddressZipCode} {
		require.Nil(t, v, "%s of erased %s", field, id)
	}
	require.Nil(t, c.Gender, "gender of %s", id)
	require.Regexp(t, `^X[A-Z]{13}$`, c.Document, "the document of %s is a pseudonym", id)
}

// TestErasureRacedWithPatches: 29 PATCHes and one DELETE of a customer
// sent at once, 100 times: the DELETE erases (204), each PATCH either
// committed before it or finds the customer gone (404), and nothing a PATCH
// wrote survives the erasure: the row holds no personal data and the
// PATCHed e-mail is free for a new registration. A DELETE of an erased
// customer scrubs its row again.
func TestErasureRacedWithPatches(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db, unlimitedRates)
		token := e.tokenFor(t, "customers:read", "customers:write", privacy.ScopePrivacyWrite)
		const races, patches = 100, 29
		for r := range races {
			created := e.bearer(t, http.MethodPost, "/v1/customers", token, map[string]any{
				"name": "Corrida " + fmt.Sprint(r), "email": fmt.Sprintf("corrida-%d@example.com", r), "cpf": posCPF(),
				"phone": "+5511900000000", "birth_date": "1990-01-02", "external_id": fmt.Sprintf("ext-%d", r),
			})
			require.Equal(t, http.StatusCreated, created.status, "%s", created.body)
			id := created.obj(t)["id"].(string)
			patched := fmt.Sprintf("trocado-%d@example.com", r)
			start := make(chan struct{})
			answers := make([]raceResp, patches+1)
			var wg sync.WaitGroup
			for i := range patches + 1 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					if i == patches {
						answers[i] = e.raceDo(http.MethodDelete, "/v1/customers/"+id, token, nil)
						return
					}
					answers[i] = e.raceDo(http.MethodPatch, "/v1/customers/"+id, token, map[string]any{
						"name": fmt.Sprintf("Nome Trocado %d", i), "email": patched, "phone": fmt.Sprintf("+55119100000%02d", i),
						"gender": "F", "address": map[string]any{"street": "Rua Trocada", "city": "Santos", "state": "SP", "zip_code": "11010-000"},
					})
				}()
			}
			close(start)
			wg.Wait()
			for i, a := range answers {
				require.NoError(t, a.err)
				if i == patches {
					require.Equal(t, http.StatusNoContent, a.status, "race %d: DELETE: %s", r, a.body)
				} else {
					require.Contains(t, []int{http.StatusOK, http.StatusNotFound}, a.status, "race %d: PATCH: %s", r, a.body)
				}
			}
			got := e.bearer(t, http.MethodGet, "/v1/customers/"+id, token, nil)
			require.Equal(t, http.StatusNotFound, got.status, "%s", got.body)
			requireScrubbed(t, db, id)
			again := e.bearer(t, http.MethodPost, "/v1/customers", token, map[string]any{
				"name": "Outra Pessoa", "email": patched, "cpf": posCPF(),
			})
			require.Equal(t, http.StatusCreated, again.status, "race %d: the PATCHed e-mail is free: %s", r, again.body)
		}
		for _, v := range []string{"Nome Trocado", "+551191000", "Rua Trocada", "11010-000"} {
			require.Empty(t, occurrences(t, db, v), "what the PATCHes wrote is nowhere after the erasures: %q", v)
		}

		// A row an erasure left with personal data (as a write racing it
		// could before) is scrubbed by the next DELETE.
		created := e.bearer(t, http.MethodPost, "/v1/customers", token, map[string]any{
			"name": "Resto", "email": "resto@example.com", "cpf": posCPF(),
		})
		require.Equal(t, http.StatusCreated, created.status, "%s", created.body)
		id := created.obj(t)["id"].(string)
		require.Equal(t, http.StatusNoContent, e.bearer(t, http.MethodDelete, "/v1/customers/"+id, token, nil).status)
		require.NoError(t, db.Ent.Customer.UpdateOneID(id).SetName("Resto Vazado").SetEmail("vazado@example.com").
			SetPhone("+5511988887777").SetAddressCity("Santos").Exec(posSys()))
		require.Equal(t, http.StatusNoContent, e.bearer(t, http.MethodDelete, "/v1/customers/"+id, token, nil).status)
		requireScrubbed(t, db, id)
		require.Empty(t, occurrences(t, db, "Resto Vazado"))
		require.Empty(t, occurrences(t, db, "vazado@example.com"))
	})
}

// TestErasureDuringSaleProcessing: a customer is erased while workers
// process many of its sales and another customer's: the DELETE never
// answers 500 (no deadlock reaches it) and erases, every job succeeds on its
// first attempt, every sale ends PROCESSED and the other customer gets all
// its points.
func TestErasureDuringSaleProcessing(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db, unlimitedRates)
		token := e.tokenFor(t, "customers:read", "customers:write", privacy.ScopePrivacyWrite)
		// Every fourth sale is the other customer's: 16 of the erased one's, 5 of
		// the other's.
		const rounds, sales, otherSales, workers = 8, 21, 5, 4
		receipt := 9000
		for r := range rounds {
			erasedDoc, otherDoc := posCPF(), posCPF()
			created := e.bearer(t, http.MethodPost, "/v1/customers", token, map[string]any{
				"name": "Apagada " + fmt.Sprint(r), "email": fmt.Sprintf("apagada-%d@example.com", r), "cpf": erasedDoc,
			})
			require.Equal(t, http.StatusCreated, created.status, "%s", created.body)
			erased := created.obj(t)["id"].(string)
			other := e.posCustomer(t, otherDoc, posCust{name: "Outro " + fmt.Sprint(r)})
			var saleIDs []string
			for i := range sales {
				doc := erasedDoc
				if i%4 == 3 {
					doc = otherDoc
				}
				receipt++
				n := fmt.Sprint(receipt)
				cust := map[string]any{"id": doc, "type": "CPF"}
				posRequireAccepted(t, e.posPost(t, "/sales", posSaleBody(posN(n), cust)), n, cust)
				saleIDs = append(saleIDs, e.posSaleID(t, n))
			}
			mine := map[string]bool{}
			for _, id := range saleIDs {
				mine[id] = true
			}
			queue := make(chan posJob[jobs.ProcessSale], len(saleIDs))
			for _, j := range posJobs(t, e) {
				if mine[j.args.SaleID] {
					queue <- j
				}
			}
			require.Len(t, queue, len(saleIDs))
			close(queue)

			start := make(chan struct{})
			var wg sync.WaitGroup
			var mu sync.Mutex
			var jobErrs []error
			var deleted raceResp
			for w := range workers + 1 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					if w == workers {
						deleted = e.raceDo(http.MethodDelete, "/v1/customers/"+erased, token, nil)
						return
					}
					pw := worker.For[jobs.ProcessSale](app.New(&app.Config{DB: db, Clock: time.Now}))
					for j := range queue {
						err := pw.Work(context.Background(), &river.Job[jobs.ProcessSale]{
							JobRow: &rivertype.JobRow{ID: j.id, Kind: jobs.ProcessSale{}.Kind(), Attempt: 1, MaxAttempts: 25},
							Args:   j.args,
						})
						if err != nil {
							mu.Lock()
							jobErrs = append(jobErrs, fmt.Errorf("sale %s: %w", j.args.SaleID, err))
							mu.Unlock()
						}
					}
				}()
			}
			close(start)
			wg.Wait()
			require.NoError(t, deleted.err)
			require.Equal(t, http.StatusNoContent, deleted.status, "round %d: DELETE: %s", r, deleted.body)
			require.Empty(t, jobErrs, "round %d: no job fails", r)
			processed, err := db.Ent.Sale.Query().Where(sale.IDIn(saleIDs...), sale.StatusEQ(sale.StatusPROCESSED)).Count(posSys())
			require.NoError(t, err)
			require.Equal(t, len(saleIDs), processed, "round %d: every sale processed", r)
			requireScrubbed(t, db, erased)
			o, err := db.Ent.Customer.Get(posSys(), other.ID)
			require.NoError(t, err)
			require.Equal(t, int64(100*otherSales), o.PointsBalance, "round %d: the other customer's points", r)
			require.Equal(t, http.StatusNotFound, e.bearer(t, http.MethodGet, "/v1/customers/"+erased, token, nil).status)
		}
	})
}
