package customers_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// BenchmarkImportSegmentCPFs imports 10,000 CPFs (half of customers, half
// unknown) into a segment of a tenant of FIDELIZA_BENCH_CUSTOMERS customers
// (default 20,000), on each database.
//
//	FIDELIZA_BENCH_CUSTOMERS=200000 go test ./app/customers -run '^$' -bench ImportSegmentCPFs -benchtime 3x
func BenchmarkImportSegmentCPFs(b *testing.B) {
	n := apptest.BenchCustomers(b)
	path := writeBenchCustomers(b, n)
	cpfs := make([]string, 10000)
	for i := range cpfs {
		cpfs[i] = importCPF(i * n / 5000 % (2 * n)) // half within the tenant's, half beyond
	}
	for _, d := range storagetest.Dialects() {
		b.Run(d, func(b *testing.B) {
			im := newImporter(b, storagetest.Open(b, d))
			in, err := os.Open(path)
			require.NoError(b, err)
			defer in.Close()
			rows, err := customers.CustomerFileRows(in, "csv", 0)
			require.NoError(b, err)
			_, err = im.a.Customers.ImportCustomers(im.ctx, rows, customers.ImportOptions{})
			require.NoError(b, err)
			admin := viewer.NewContext(context.Background(), viewer.Viewer{Role: viewer.RoleAdmin, TenantID: tenantOf(b, im)})
			for b.Loop() {
				b.StopTimer()
				seg, err := im.a.Customers.CreateSegment(admin, customers.SegmentInput{Name: opt.Of(fmt.Sprintf("s-%d", time.Now().UnixNano())).Ptr()})
				require.NoError(b, err)
				b.StartTimer()
				res, err := im.a.Customers.ImportSegmentCPFs(admin, seg.ID, cpfs)
				require.NoError(b, err)
				require.NotZero(b, res.Added)
			}
		})
	}
}

func tenantOf(b *testing.B, im *importer) string {
	v, _ := viewer.FromContext(im.ctx)
	return v.TenantID
}
