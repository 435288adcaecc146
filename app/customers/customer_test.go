package customers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
)

func TestPOSStatus(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	cases := []struct {
		name string
		c    ent.Customer
		want string
	}{
		{"pre-registered with a phone", ent.Customer{Phone: s("+5511987654321")}, POSStatusPreRegister},
		{"pre-registered bare", ent.Customer{}, POSStatusPreRegister},
		{"name only", ent.Customer{Name: "Ana"}, POSStatusIncomplete},
		{"no birth date", ent.Customer{Name: "Ana", Email: s("a@x.com"), Phone: s("+5511987654321")}, POSStatusIncomplete},
		{"no phone", ent.Customer{Name: "Ana", Email: s("a@x.com"), BirthDate: s("1990-01-01")}, POSStatusIncomplete},
		{"no e-mail", ent.Customer{Name: "Ana", Phone: s("+5511987654321"), BirthDate: s("1990-01-01")}, POSStatusIncomplete},
		{"complete", ent.Customer{Name: "Ana", Email: s("a@x.com"), Phone: s("+5511987654321"), BirthDate: s("1990-01-01")}, POSStatusComplete},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, POSStatus(&tc.c))
		})
	}
}
