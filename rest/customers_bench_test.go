package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// benchCustomers is the size of the customer table of the list benchmarks.
const benchCustomers = 100_000

// cpfFor makes the i-th valid CPF: 9 digits from i and the two check digits.
func cpfFor(i int) string {
	base := fmt.Sprintf("%09d", 100000000+i)
	digit := func(s string, w int) byte {
		sum := 0
		for j := 0; j < len(s); j++ {
			sum += int(s[j]-'0') * (w - j)
		}
		r := sum * 10 % 11
		if r == 10 {
			r = 0
		}
		return byte('0' + r)
	}
	d1 := digit(base, 10)
	return base + string(d1) + string(digit(base+string(d1), 11))
}

var firstNames = []string{"Ana", "Bruno", "Carla", "Diego", "Elisa", "Fábio", "Gisele", "Hugo", "Iara", "João", "Kátia", "Luís"}
var lastNames = []string{"Souza", "Lima", "Conceição", "Araújo", "Pereira", "Gonçalves", "Müller", "Oliveira", "Simões", "Brandão"}

// BenchmarkCustomerList measures GET /v1/customers over HTTP on a tenant of
// 100,000 customers: pages, deep pages, filters and each kind of search.
//
//	go test ./rest -run '^$' -bench CustomerList -benchtime 200x
//	FIDELIZA_TEST_DATABASE_URL=postgres://… go test ./rest -run '^$' -bench CustomerList -benchtime 200x
func BenchmarkCustomerList(b *testing.B) {
	for _, d := range storagetest.Dialects() {
		b.Run(d, func(b *testing.B) {
			db := storagetest.Open(b, d)
			s := newScopeServer(b, db, unlimitedRates)
			ctx := viewer.TenantContext(context.Background(), s.tenantID)
			seg, err := db.Ent.Segment.Create().SetName("bench").Save(ctx)
			require.NoError(b, err)
			for start := 0; start < benchCustomers; start += 1000 {
				batch := make([]*ent.CustomerCreate, 0, 1000)
				for i := start; i < start+1000; i++ {
					c := db.Ent.Customer.Create().
						SetName(fmt.Sprintf("%s %s %d", firstNames[i%len(firstNames)], lastNames[i%len(lastNames)], i)).
						SetEmail(fmt.Sprintf("cliente%d@example.com", i)).
						SetDocument(cpfFor(i)).
						SetExternalID(fmt.Sprintf("crm-%d", i))
					if i%10 == 0 {
						c.AddSegmentIDs(seg.ID)
					}
					batch = append(batch, c)
				}
				require.NoError(b, db.Ent.Customer.CreateBulk(batch...).Exec(ctx))
			}
			// Fresh planner statistics (and, on PostgreSQL, the search index's
			// pending entries merged), as autovacuum and the service's PRAGMA
			// optimize keep them in production.
			analyze := "ANALYZE"
			if db.Dialect == dialect.Postgres {
				analyze = "VACUUM ANALYZE"
			}
			_, err = db.SQL.Exec(analyze)
			require.NoError(b, err)
			token := s.tokenFor(b, "customers:read")
			get := func(b *testing.B, query url.Values) {
				req, _ := http.NewRequest(http.MethodGet, s.srv.URL+"/v1/customers?"+query.Encode(), nil)
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(b, err)
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				require.Equal(b, http.StatusOK, resp.StatusCode)
			}
			// A cursor some 500 pages deep, to show keyset pages cost the same deep down.
			deep := url.Values{"limit": {"100"}}
			for range 500 {
				req, _ := http.NewRequest(http.MethodGet, s.srv.URL+"/v1/customers?"+deep.Encode(), nil)
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(b, err)
				var page struct {
					Pagination struct {
						NextCursor *string `json:"next_cursor"`
					} `json:"pagination"`
				}
				require.NoError(b, json.NewDecoder(resp.Body).Decode(&page))
				resp.Body.Close()
				deep.Set("cursor", *page.Pagination.NextCursor)
			}
			cases := []struct {
				name  string
				query url.Values
			}{
				{"first_page_20", url.Values{}},
				{"first_page_100", url.Values{"limit": {"100"}}},
				{"page_500_deep", deep},
				{"segment_filter", url.Values{"segment_id": {seg.ID}}},
				{"search_name_accentless", url.Values{"search": {"joao conceicao 4"}}},
				{"search_name_prefixes", url.Values{"search": {"gon 7777"}}},
				{"search_email", url.Values{"search": {"cliente77777@example.com"}}},
				{"search_cpf_formatted", url.Values{"search": {cpfFor(77777)[:3] + "." + cpfFor(77777)[3:6] + "." + cpfFor(77777)[6:9] + "-" + cpfFor(77777)[9:]}}},
				{"search_external_id", url.Values{"search": {"crm-77777"}}},
			}
			for _, tc := range cases {
				b.Run(tc.name, func(b *testing.B) {
					for b.Loop() {
						get(b, tc.query)
					}
				})
			}
		})
	}
}
