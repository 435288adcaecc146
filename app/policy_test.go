package app_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/audiences"
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
		policy, ok := policies[strings.ToLower(f.Name)]
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

// TestPoliciesEnforced: every operation whose rule is not internal begins
// by checking it (Policy.Allow with its own name), so a transport cannot
// reach it with less than its rule, whatever scope the transport required.
func TestPoliciesEnforced(t *testing.T) {
	dirs, err := filepath.Glob("*/policy.go")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, p := range dirs {
		dir := filepath.Dir(p)
		if dir == "kernel" {
			continue
		}
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		checks := map[string]string{} // operation → the name its first statement checks
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			require.NoError(t, err)
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Recv == nil || !fd.Name.IsExported() {
					continue
				}
				checks[fd.Name.Name] = allowedName(fd)
			}
		}
		policy, ok := policies[dir]
		require.True(t, ok, "app/%s has a policy table this test does not know", dir)
		for op, rule := range policy {
			if rule.Internal {
				continue
			}
			require.Equal(t, op, checks[op], "%s.%s does not begin with Policy.Allow(ctx, %q)", dir, op, op)
		}
	}
}

// allowedName is the operation name of fd's first statement when it is
// `if err := Policy.Allow(ctx, "Name"); err != nil`, else "".
func allowedName(fd *ast.FuncDecl) string {
	if fd.Body == nil || len(fd.Body.List) == 0 {
		return ""
	}
	is, ok := fd.Body.List[0].(*ast.IfStmt)
	if !ok {
		return ""
	}
	as, ok := is.Init.(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 {
		return ""
	}
	call, ok := as.Rhs[0].(*ast.CallExpr)
	if !ok || len(call.Args) != 2 {
		return ""
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Allow" {
		return ""
	}
	if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "Policy" {
		return ""
	}
	lit, ok := call.Args[1].(*ast.BasicLit)
	if !ok {
		return ""
	}
	name, _ := strconv.Unquote(lit.Value)
	return name
}

// policies are the contexts' tables, by package.
var policies = map[string]kernel.Policy{
	"customers": customers.Policy, "campaigns": campaigns.Policy, "loyalty": loyalty.Policy,
	"insights": insights.Policy, "privacy": privacy.Policy, "backoffice": backoffice.Policy,
	"webhooks": webhooks.Policy, "checkout": checkout.Policy, "pos": pos.Policy,
	"audiences": audiences.Policy,
}
