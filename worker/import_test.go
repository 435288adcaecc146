package worker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/ent/customerimport"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
	"github.com/fideliza/fideliza/worker"
)

// TestImportCustomersJob sends a file through the application's operation
// and lets a working River client load it, as serve's worker does.
func TestImportCustomersJob(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		env := apptest.New(t, db, apptest.WithTenant("Loja Import"))
		a := env.App
		ctx := viewer.NewContext(context.Background(), viewer.Viewer{Role: viewer.RoleClient, TenantID: env.TenantID, Subject: "cli_test",
			Scopes: []string{"customers:read", "customers:write"}})

		client, err := worker.NewClient(a, worker.Config{Work: true, MaxWorkers: 2})
		require.NoError(t, err)
		events, cancel := client.Subscribe(river.EventKindJobCompleted)
		defer cancel()
		require.NoError(t, client.Start(context.Background()))
		defer client.Stop(context.Background())

		var file strings.Builder
		for i := 1; i <= 3000; i++ {
			fmt.Fprintf(&file, `{"name":"Cliente %d","email":"c%d@example.com","cpf":"%s"}`+"\n", i, i, document.CPFOf(i))
		}
		imp, err := a.Customers.StartCustomerImport(ctx, strings.NewReader(file.String()), "jsonl", false)
		require.NoError(t, err)
		require.Equal(t, customerimport.StatusQueued, imp.Status)
		require.Equal(t, "cli_test", imp.RequestedBy)
		// Periodic jobs (event dispatch) complete too; wait for the import's.
		deadline := time.After(60 * time.Second)
		for done := false; !done; {
			select {
			case ev := <-events:
				done = ev.Job.Kind == jobs.ImportCustomers{}.Kind()
			case <-deadline:
				t.Fatal("the import did not complete")
			}
		}
		imp, err = a.Customers.CustomerImport(ctx, imp.ID)
		require.NoError(t, err)
		require.Equal(t, customerimport.StatusSucceeded, imp.Status)
		require.Equal(t, []int{3000, 3000, 0, 0}, []int{imp.Rows, imp.Created, imp.Updated, imp.Refused})
		require.Equal(t, 3000, imp.DoneLine)
		n, err := db.Ent.Customer.Query().Count(ctx)
		require.NoError(t, err)
		require.Equal(t, 3000, n)
	})
}
