package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// transports are the directories whose code decodes, calls one operation of
// the application (package app) and encodes: the context is the only door
// to the storage, so none of them queries it.
var transports = []string{"rest", "graph", "panel", "worker", "cmd"}

// storageAllowed are the files of the transports that reach the storage
// themselves, each with why. An entry whose file no longer does fails, so
// the list only shrinks.
var storageAllowed = map[string]string{
	"cmd/fideliza/root.go": "the composition root: opens the storage and gives the auth service its ent client",
	"cmd/fideliza-bench/main.go": "the benchmark's composition root: opens the storage, wires the auth service, " +
		"and runs VACUUM ANALYZE and CHECKPOINT before measuring",
	"cmd/fideliza-bench/data.go": "the benchmark's seed: products, 100 campaigns stored active at once and customers up to " +
		"millions, in bulk inserts (an operation per row would measure the seeding, and created campaigns wait " +
		"for the lifecycle job)",
	"cmd/fideliza-bench/dashgen.go": "grows a tenant's sales to millions by SQL statements (triggers suspended on SQLite) " +
		"and rebuilds its rollups, then finds where an earlier growth stopped",
	"cmd/fideliza-bench/dashboards.go": "reuses the tenant an earlier run grew, found by its name, and issues the analyst's " +
		"token the dashboards are measured with",
	"cmd/fideliza-bench/loads.go": "counts the sales queue as it drains, and measures raw transactions of the shape " +
		"of sale ingestion as a baseline",
	"cmd/fideliza-bench/processes.go": "reads when each of its sales was processed, to measure the latency",
}

// TestTransportsQueryNoStorage: the non-test Go files of the transports
// use no ent client, query builder or storage handle, but those of
// storageAllowed. Generated code (gqlgen's executor, which calls the
// resolvers and entgql's edge resolvers of package ent) is left out.
func TestTransportsQueryNoStorage(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	clients := entClients(t, root)
	found := map[string][]string{}
	files := 0
	for _, dir := range transports {
		for _, f := range handWrittenFiles(t, filepath.Join(root, dir)) {
			if strings.HasSuffix(f.path, "_test.go") {
				continue
			}
			files++
			name := dir + "/" + f.path
			if uses := storageUses(f.ast, clients); len(uses) > 0 {
				found[name] = uses
			}
		}
	}
	require.Greater(t, files, 50, "the transports' files were found")
	for name, uses := range found {
		_, ok := storageAllowed[name]
		require.Truef(t, ok, "%s reaches the storage itself (%s): call an operation of the application instead",
			name, strings.Join(uses, "; "))
	}
	for name := range storageAllowed {
		_, ok := found[name]
		require.Truef(t, ok, "%s no longer reaches the storage: take it out of storageAllowed", name)
	}
}

// TestStorageUses checks what counts as reaching the storage, on made-up
// files.
func TestStorageUses(t *testing.T) {
	t.Parallel()
	clients := map[string]bool{"Customer": true, "Campaign": true}
	const entImport = `import "github.com/fideliza/fideliza/ent"` + "\n"
	tests := []struct {
		name, body string
		want       []string
	}{
		{"an entity client's query", `func f(r *R) { r.client.Customer.Query().All(nil) }`, []string{"r.client.Customer.Query()"}},
		{"an entity client's write", `func f(c *C) { c.Campaign.Create() }`, []string{"c.Campaign.Create()"}},
		{"the storage's ent client", `func f(a *A) { g(a.DB.Ent) }`, []string{"a.DB.Ent"}},
		{"the storage's SQL", `func f(db *D) { db.SQL.Exec() }`, []string{"db.SQL"}},
		{"a storage transaction", `func f(db *D) { db.InTx(nil, nil) }`, []string{"db.InTx()"}},
		{"the ent client's type", `var c *ent.Client`, []string{"ent.Client"}},
		{"a node lookup", `func f(c *C) { c.Noder(nil, "") }`, []string{"c.Noder()"}},
		{"an edge's query", `func f(s *ent.Sale) { s.QueryItems().All(nil) }`, []string{"s.QueryItems()"}},
		{"a URL's query", `func f(r *R) { r.URL.Query().Get("a") }`, nil},
		{"an entity's field", `func f(v *V) string { return v.Customer.Name }`, nil},
		{"an operation", `func f(a *A) { a.Customers.ListCustomers(nil) }`, nil},
		{"ent's entity types", `func f(c *ent.Customer) bool { return ent.IsNotFound(nil) }`, nil},
		{"a package's function", `func f() { url.QueryEscape("") }`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := "package p\n\n" + entImport + "import \"net/url\"\n\nvar _ = url.PathEscape\n\n" + tt.body + "\n"
			f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.SkipObjectResolution)
			require.NoError(t, err)
			require.Equal(t, tt.want, storageUses(f, clients))
		})
	}
}

// entClientMethods are the methods of ent's entity clients (Client.Customer
// and its like): each builds a query or a write.
var entClientMethods = []string{"Query", "Get", "GetX", "Create", "CreateBulk", "MapCreateBulk", "Update", "UpdateOne",
	"UpdateOneID", "Delete", "DeleteOne", "DeleteOneID"}

// entPackageNames are the names of package ent that reach the storage:
// the client and its transactions.
var entPackageNames = []string{"Client", "NewClient", "Open", "Tx", "NewTxContext", "TxFromContext", "NewContext", "FromContext"}

// edgeQuery is the name of an entity's method querying an edge.
var edgeQuery = regexp.MustCompile(`^Query[A-Z]`)

// storageUses returns, in the order they appear, the places of f that reach
// the storage: the storage's handles (.Ent, .SQL, InTx), package ent's
// client, an entity client's builders (clients are the fields of
// ent.Client), ent's node lookups and entities' edge queries.
func storageUses(f *ast.File, clients map[string]bool) []string {
	packages := map[string]string{} // local name → import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		packages[name] = p
	}
	isPackage := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return ok && packages[id.Name] != ""
	}
	var uses []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && packages[id.Name] == "github.com/fideliza/fideliza/ent" {
				if slices.Contains(entPackageNames, n.Sel.Name) {
					uses = append(uses, "ent."+n.Sel.Name)
				}
				return true
			}
			if (n.Sel.Name == "Ent" || n.Sel.Name == "SQL") && !isPackage(n.X) {
				uses = append(uses, expr(n))
			}
		case *ast.CallExpr:
			call, ok := n.Fun.(*ast.SelectorExpr)
			if !ok || isPackage(call.X) {
				return true
			}
			m := call.Sel.Name
			client, onClient := call.X.(*ast.SelectorExpr)
			switch {
			case onClient && clients[client.Sel.Name] && slices.Contains(entClientMethods, m),
				m == "Noder" || m == "Noders" || m == "InTx" || edgeQuery.MatchString(m):
				uses = append(uses, expr(call)+"()")
			}
		}
		return true
	})
	return uses
}

// expr writes a selector chain as the source has it: a.DB.Ent.
func expr(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return expr(e.X) + "." + e.Sel.Name
	case *ast.CallExpr:
		return expr(e.Fun) + "()"
	case *ast.IndexExpr:
		return expr(e.X) + "[…]"
	default:
		return fmt.Sprintf("(%T)", e)
	}
}

// entClients returns the entity clients of package ent: the fields of its
// Client, each an entity's builders.
func entClients(t *testing.T, root string) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, "ent", "client.go"), nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	clients := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Client" {
			return true
		}
		for _, field := range ts.Type.(*ast.StructType).Fields.List {
			star, ok := field.Type.(*ast.StarExpr)
			if !ok {
				continue
			}
			if id, ok := star.X.(*ast.Ident); ok && strings.HasSuffix(id.Name, "Client") {
				for _, name := range field.Names {
					clients[name.Name] = true
				}
			}
		}
		return false
	})
	require.Contains(t, clients, "Customer", "ent.Client's entity clients were read")
	return clients
}
