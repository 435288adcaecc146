package rest

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	customersctx "github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestRotateDataKeyWhileSalesArrive rotates the data key while the point of
// sale registers sales and pre-registers customers: afterwards every document
// opens, each is the one sent, all are under the new key, and lookups by the
// blind index still find them. An interrupted rotation resumes.
func TestRotateDataKeyWhileSalesArrive(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db, unlimitedRates)
		e.posSettings(t, backoffice.TenantSettings{PreRegistration: posBool(true)})
		var (
			mu      sync.Mutex
			sales   = map[string]string{} // sale id → the document sent
			known   []string              // documents of the customers identify pre-registered
			counter atomic.Int64
		)
		// arrive identifies a new customer and registers a sale of theirs;
		// it runs beside the rotation, so it asserts rather than stops.
		arrive := func(t *testing.T) bool {
			doc := posCPF()
			r := e.posPost(t, "/customers/identify", posIdentifyBody("s-rot", doc, "CPF"))
			if !assert.Equal(t, http.StatusOK, r.status, "%s", r.body) {
				return false
			}
			mu.Lock()
			known = append(known, doc)
			mu.Unlock()
			id := fmt.Sprint(910000 + counter.Add(1))
			r = e.posPost(t, "/sales", posSaleBody(posN(id), map[string]any{"id": doc, "type": "CPF"}))
			if !assert.Equal(t, http.StatusAccepted, r.status, "%s", r.body) {
				return false
			}
			mu.Lock()
			sales[id] = doc
			mu.Unlock()
			return true
		}
		for range 300 {
			require.True(t, arrive(t))
		}

		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
						if !arrive(t) {
							return
						}
					}
				}
			}()
		}
		rotation, err := db.RotateDataKey(context.Background(), nil)
		close(stop)
		wg.Wait()
		require.NoError(t, err)
		require.False(t, rotation.Resumed)
		require.GreaterOrEqual(t, rotation.Resealed, 600, "the 300 customers and sales from before, and what arrived before the new key")
		remaining, err := db.RemainingToReseal(context.Background())
		require.NoError(t, err)
		require.Zero(t, remaining, "every document is under %s", rotation.KeyID)
		require.Greater(t, len(sales), 300, "sales arrived during the rotation")
		t.Logf("%d sales arrived during the rotation to %s; %d documents re-sealed", len(sales)-300, rotation.KeyID, rotation.Resealed)
		requireDocumentsIntact(t, e, sales, known)

		// Interrupted after its first batch, a rotation resumes where it
		// stopped and adds no key.
		ctx, cancel := context.WithCancel(context.Background())
		_, err = db.RotateDataKey(ctx, func(done, total int) { cancel() })
		require.ErrorIs(t, err, context.Canceled)
		remaining, err = db.RemainingToReseal(context.Background())
		require.NoError(t, err)
		require.Positive(t, remaining, "the interruption left documents under the old key")
		resumed, err := db.RotateDataKey(context.Background(), nil)
		require.NoError(t, err)
		require.True(t, resumed.Resumed)
		require.Equal(t, remaining, resumed.Resealed)
		require.NotEqual(t, rotation.KeyID, resumed.KeyID)
		requireDocumentsIntact(t, e, sales, known)
	})
}

// requireDocumentsIntact checks every sale's and customer's document opens
// and is the one sent, and identify still finds each customer.
func requireDocumentsIntact(t *testing.T, e *posEnv, sales map[string]string, known []string) {
	t.Helper()
	stored, err := e.db.Ent.Sale.Query().All(posSys())
	require.NoError(t, err, "every sale's document opens")
	require.Len(t, stored, len(sales), "no sale lost")
	for _, s := range stored {
		require.Equal(t, sales[s.ExternalID], s.CustomerDocument, "sale %s", s.ExternalID)
	}
	customers, err := e.db.Ent.Customer.Query().All(posSys())
	require.NoError(t, err, "every customer's document opens")
	var docs []string
	for _, c := range customers {
		docs = append(docs, c.Document)
	}
	require.ElementsMatch(t, known, docs)
	for _, doc := range []string{known[0], known[len(known)-1]} {
		r := e.posPost(t, "/customers/identify", posIdentifyBody("s-after", doc, "CPF"))
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, customersctx.POSStatusPreRegister, r.obj(t)["customer"].(map[string]any)["status"], "found by its index: %s", r.body)
	}
}
