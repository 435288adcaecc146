package app_test

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/insights"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/app/privacy"
	"github.com/fideliza/fideliza/app/webhooks"
)

// TestPolicies: every exported operation of every context's Service has a
// rule in its context's policy table, and every rule names an operation.
func TestPolicies(t *testing.T) {
	policies := map[string]kernel.Policy{
		"Customers": customers.Policy, "Campaigns": campaigns.Policy, "Loyalty": loyalty.Policy,
		"Insights": insights.Policy, "Privacy": privacy.Policy, "Backoffice": backoffice.Policy,
		"Webhooks": webhooks.Policy, "Checkout": checkout.Policy, "POS": pos.Policy,
	}
	kernelMethods := map[string]bool{}
	kt := reflect.TypeFor[*kernel.Kernel]()
	for i := range kt.NumMethod() {
		kernelMethods[kt.Method(i).Name] = true
	}
	root := reflect.TypeFor[app.App]()
	seen := 0
	for i := range root.NumField() {
		f := root.Field(i)
		if f.Anonymous || f.Type.Kind() != reflect.Pointer || f.Type.Elem().Name() != "Service" {
			continue
		}
		seen++
		policy, ok := policies[f.Name]
		require.True(t, ok, "context %s has no policy table in this test", f.Name)
		ops := map[string]bool{}
		for j := range f.Type.NumMethod() {
			name := f.Type.Method(j).Name
			if kernelMethods[name] {
				continue
			}
			ops[name] = true
			require.Contains(t, policy, name, "%s.%s has no policy rule", f.Name, name)
		}
		for name, rule := range policy {
			require.True(t, ops[name], "%s's policy names %s, which is no operation", f.Name, name)
			kinds := 0
			for _, on := range []bool{len(rule.Scopes) > 0, rule.System, rule.Internal} {
				if on {
					kinds++
				}
			}
			require.Equal(t, 1, kinds, "%s.%s: a rule is scopes, system or internal", f.Name, name)
		}
	}
	require.Equal(t, len(policies), seen, "every context of App is checked")
}
