package app_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/audiences"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/app/insights"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/nodes"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/app/privacy"
	"github.com/fideliza/fideliza/app/scoring"
	"github.com/fideliza/fideliza/app/wallets"
	"github.com/fideliza/fideliza/app/webhooks"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/viewer"
)

// TestRules: every exported operation of every context's Service has a
// field in its context's Rules, every field names an operation, and each
// rule carries its operation's name (what Scope's panic says). The kernel
// is a private field of each Service, so every exported method counts.
func TestRules(t *testing.T) {
	root := reflect.TypeFor[app.App]()
	seen := 0
	for i := range root.NumField() {
		f := root.Field(i)
		if f.Anonymous || f.Type.Kind() != reflect.Pointer || f.Type.Elem().Name() != "Service" {
			continue
		}
		seen++
		dir := path.Base(f.Type.Elem().PkgPath())
		rs, ok := rules[dir]
		require.True(t, ok, "context %s (app/%s) has no Rules in this test", f.Name, dir)
		ops := map[string]bool{}
		for j := range f.Type.NumMethod() {
			name := f.Type.Method(j).Name
			ops[name] = true
			_, ok := rs.Type().FieldByName(name)
			require.True(t, ok, "%s.%s has no rule in %s.Rules", f.Name, name, dir)
		}
		for name, rule := range fields(rs) {
			require.True(t, ops[name], "%s.Rules.%s names no operation", dir, name)
			if rule.System || rule.Internal {
				msg := fmt.Sprintf("policy: %s has no scope a transport may require", name)
				require.PanicsWithValue(t, msg, func() { rule.Scope() }, "%s.Rules.%s carries its name", dir, name)
			}
		}
	}
	require.Equal(t, len(rules), seen, "every context of App is checked")
}

// TestRulesEnforced: every operation whose rule is not internal begins by
// checking it (Rules.<its name>.Allow(ctx)), so a transport cannot reach it
// with less than its rule, whatever scope the transport required.
// TestOnlyTheServiceIsTheService: a rule lets the service itself by (the
// system, the operator, a job in its tenant), and no principal a credential
// makes, whatever its subject: an identity provider may well name a user
// "system".
func TestOnlyTheServiceIsTheService(t *testing.T) {
	const tenant = "6f1c2a8e-0b7d-4c1e-9a55-2f0d8e1b3c4a"
	ctx := context.Background()
	every := map[string]kernel.Rule{"pos.RegisterSale": pos.Rules.RegisterSale,
		"pos.ProcessSale (system)": pos.Rules.ProcessSale, "backoffice.ResetSandbox": backoffice.Rules.ResetSandbox}
	// What a principal named "system" may not do: the service's own
	// operations, and those its role or scopes do not grant.
	refused := []string{"pos.ProcessSale (system)", "backoffice.ResetSandbox"}
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		allowed bool
	}{
		{"the system", viewer.SystemContext(ctx), true},
		{"the operator", viewer.OperatorContext(ctx, "ana"), true},
		{"a job in its tenant", viewer.TenantContext(ctx, tenant), true},
		{"an analyst whose subject is system", viewer.NewContext(ctx, viewer.Viewer{Role: viewer.RoleAnalyst, TenantID: tenant,
			Subject: "system", Scopes: auth.RoleScopes(viewer.RoleAnalyst)}), false},
		{"a client whose id is system", viewer.NewContext(ctx, viewer.Viewer{Role: viewer.RoleClient, TenantID: tenant,
			Subject: "system", Scopes: []string{auth.ScopePOS}}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.allowed {
				for name, rule := range every {
					require.NoError(t, rule.Allow(tc.ctx), name)
				}
				return
			}
			for _, name := range refused {
				var e *apperr.Error
				err := every[name].Allow(tc.ctx)
				require.True(t, errors.As(err, &e), "%s: %v", name, err)
				require.Equal(t, apperr.KindForbidden, e.Kind, name)
			}
		})
	}
	require.NoError(t, pos.Rules.ProcessSale.Allow(viewer.TenantContext(ctx, tenant)))
	admin := viewer.NewContext(ctx, viewer.Viewer{Role: viewer.RoleAdmin, TenantID: tenant, Subject: "system", Scopes: auth.RoleScopes(viewer.RoleAdmin)})
	require.Error(t, pos.Rules.ProcessSale.Allow(admin), "an admin named system is no job")
}

func TestRulesEnforced(t *testing.T) {
	for dir, rs := range rules {
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, "app/%s", dir)
		checks := map[string]string{} // operation → the rule its first statement checks
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			require.NoError(t, err)
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || !isServiceMethod(fd) || !fd.Name.IsExported() {
					continue
				}
				checks[fd.Name.Name] = allowedRule(fd)
			}
		}
		for op, rule := range fields(rs) {
			if rule.Internal {
				continue
			}
			require.Equal(t, op, checks[op], "%s.%s does not begin with Rules.%s.Allow(ctx)", dir, op, op)
		}
	}
}

// isServiceMethod says whether fd is a method of *Service.
func isServiceMethod(fd *ast.FuncDecl) bool {
	if fd.Recv == nil || len(fd.Recv.List) != 1 {
		return false
	}
	star, ok := fd.Recv.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == "Service"
}

// allowedRule is the rule fd's first statement checks when it is
// `if err := Rules.Name.Allow(ctx); err != nil`, else "".
func allowedRule(fd *ast.FuncDecl) string {
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
	if !ok || len(call.Args) != 1 {
		return ""
	}
	if arg, ok := call.Args[0].(*ast.Ident); !ok || arg.Name != "ctx" {
		return ""
	}
	allow, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || allow.Sel.Name != "Allow" {
		return ""
	}
	rule, ok := allow.X.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	if x, ok := rule.X.(*ast.Ident); !ok || x.Name != "Rules" {
		return ""
	}
	return rule.Sel.Name
}

// fields are the rules of a context's Rules, by operation.
func fields(rs reflect.Value) map[string]kernel.Rule {
	out := map[string]kernel.Rule{}
	for i := range rs.NumField() {
		out[rs.Type().Field(i).Name] = rs.Field(i).Interface().(kernel.Rule)
	}
	return out
}

// rules are the contexts' Rules, by package.
var rules = map[string]reflect.Value{
	"customers": reflect.ValueOf(customers.Rules), "campaigns": reflect.ValueOf(campaigns.Rules),
	"loyalty": reflect.ValueOf(loyalty.Rules), "insights": reflect.ValueOf(insights.Rules),
	"privacy": reflect.ValueOf(privacy.Rules), "backoffice": reflect.ValueOf(backoffice.Rules),
	"webhooks": reflect.ValueOf(webhooks.Rules), "checkout": reflect.ValueOf(checkout.Rules),
	"pos": reflect.ValueOf(pos.Rules), "audiences": reflect.ValueOf(audiences.Rules),
	"nodes": reflect.ValueOf(nodes.Rules), "scoring": reflect.ValueOf(scoring.Rules), "wallets": reflect.ValueOf(wallets.Rules),
	"giftcards": reflect.ValueOf(giftcards.Rules),
}
