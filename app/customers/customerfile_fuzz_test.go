package customers_test

import (
	"bytes"
	"testing"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/apperr"
)

// FuzzCustomerFileRows: any bytes, read as CSV or JSON Lines from any line,
// yield rows in increasing line order, each either a customer or a
// documented error, and never panic. The seed corpus is in
// testdata/fuzz/FuzzCustomerFileRows.
//
//	go test ./app/customers -run '^$' -fuzz FuzzCustomerFileRows -fuzztime 60s
func FuzzCustomerFileRows(f *testing.F) {
	f.Add([]byte("cpf,name,email\n52998224725,Ana,ana@example.com\n"), false, 0)
	f.Add([]byte("\ufeffCPF,Name,Email,marketing_sms\n\"529.982.247-25\",\"Ana, a\",a@x.com,sim\n1,2\n"), false, 1)
	f.Add([]byte(`{"name":"Ana","email":"a@x.com","cpf":"52998224725","consent":{"marketing_email":true}}`+"\n{\"name\":1}\n\n[]\n"), true, 0)
	f.Fuzz(func(t *testing.T, data []byte, jsonl bool, after int) {
		format := "csv"
		if jsonl {
			format = "jsonl"
		}
		rows, err := customers.CustomerFileRows(bytes.NewReader(data), format, after)
		if err != nil {
			return
		}
		last := 0
		for row, err := range rows {
			if err != nil {
				t.Fatalf("a file in memory could not be read: %v", err)
			}
			if row.Line <= last || row.Line <= after {
				t.Fatalf("line %d after line %d (resuming after %d)", row.Line, last, after)
			}
			last = row.Line
			if row.Err != nil {
				if _, ok := apperr.As(row.Err); !ok {
					t.Fatalf("line %d: an undocumented error %v", row.Line, row.Err)
				}
			}
		}
	})
}
