package rest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// campRace sends the bodies at once to a campaign's redeem, with the
// Idempotency-Key when key is not "", and returns the answers.
func (e *campEnv) campRace(t *testing.T, campaignID, key string, bodies []map[string]any) []apiResp {
	t.Helper()
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	answers := make([]apiResp, len(bodies))
	for i, b := range bodies {
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/v1/campaigns/"+campaignID+"/redeem", bytes.NewReader(raw))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+e.token)
			if key != "" {
				req.Header.Set("Idempotency-Key", key)
			}
			ready.Done()
			<-start
			res, err := e.srv.Client().Do(req)
			if err != nil {
				answers[i] = apiResp{status: -1, body: []byte(err.Error())}
				return
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			answers[i] = apiResp{status: res.StatusCode, header: res.Header, body: body}
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	return answers
}

// TestRedeemRacesAnswerOneCodePerSituation (issue 15, item 2): one
// Idempotency-Key sent concurrently with two bodies answers the first
// redemption, its replays, 422 idempotency_key_reused or 409, never 500;
// concurrent redeems of one validation token for different orders answer
// one redemption and validation_token_used for every other, on both
// databases alike.
func TestRedeemRacesAnswerOneCodePerSituation(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		cust := e.campCustomer(t, "Eva Melo")
		camp := e.campCreateID(t, "cashback", "discount", map[string]any{"mode": "percentage", "value": 10, "credit_after_days": 0})

		t.Run("one key, two bodies", func(t *testing.T) {
			tok := e.campTokenFor(t, cust)
			var bodies []map[string]any
			for i := range 40 {
				paid := "40.00"
				if i%2 == 1 {
					paid = "41.00"
				}
				bodies = append(bodies, campRedeemBody(cust, "order-key", tok, paid))
			}
			counts := map[string]int{}
			for _, a := range e.campRace(t, camp, "caixa-9-venda-1", bodies) {
				switch {
				case a.status == http.StatusCreated:
					counts["201"]++
				case a.status == http.StatusUnprocessableEntity && a.obj(t)["error"] == "idempotency_key_reused":
					counts["reused"]++
				case a.status == http.StatusConflict:
					counts["409"]++
				default:
					t.Fatalf("answer %d: %s", a.status, a.body)
				}
			}
			t.Logf("%s: %v", db.Dialect, counts)
			require.Positive(t, counts["201"])
		})

		t.Run("one token, many orders", func(t *testing.T) {
			tok := e.campTokenFor(t, cust)
			var bodies []map[string]any
			for i := range 20 {
				bodies = append(bodies, campRedeemBody(cust, "order-"+string(rune('A'+i)), tok, "40.00"))
			}
			var created int
			for _, a := range e.campRace(t, camp, "", bodies) {
				if a.status == http.StatusCreated {
					created++
					continue
				}
				require.Equal(t, http.StatusUnprocessableEntity, a.status, "%s", a.body)
				require.Equal(t, "validation_token_used", a.obj(t)["error"], "one code for one situation: %s", a.body)
			}
			require.Equal(t, 1, created)
		})
	})
}
