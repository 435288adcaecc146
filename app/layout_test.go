package app_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/fideliza/fideliza/"

// TestLayout keeps the layers apart: only worker/ and cmd/ depend on the
// worker package (the application inserts jobs through package jobs), no
// application package depends on the test clock, the domain packages import
// no transport, and each context of the application imports only the kernel
// and the contexts below it.
func TestLayout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	// Each line: a package, then everything it depends on (not its tests).
	out, err := exec.Command("go", "list", "-deps=false", "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"...").Output()
	require.NoError(t, err)
	imports, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"domain/...").Output()
	require.NoError(t, err)
	transports := []string{module + "rest", module + "graph", module + "panel", module + "worker",
		"github.com/go-chi/chi/v5", "github.com/99designs/gqlgen"}
	checked := 0
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		fields := strings.Fields(sc.Text())
		pkg, deps := fields[0], fields[1:]
		if strings.HasPrefix(pkg, module+"worker") || strings.HasPrefix(pkg, module+"cmd/") || strings.HasPrefix(pkg, module+"ent") {
			continue
		}
		require.NotContains(t, deps, module+"worker", "%s depends on worker", pkg)
		if pkg == module+"app" || strings.HasPrefix(pkg, module+"app/") {
			// The application runs on the clock it is given; the demo's
			// year sets one of its own (package demoyear).
			require.NotContains(t, deps, module+"testclock", "%s depends on the test clock", pkg)
		}
		checked++
	}
	for sc := bufio.NewScanner(bytes.NewReader(imports)); sc.Scan(); {
		fields := strings.Fields(sc.Text())
		for _, imp := range fields[1:] {
			for _, tr := range transports {
				require.False(t, imp == tr || strings.HasPrefix(imp, tr+"/"), "domain package %s imports %s", fields[0], imp)
			}
		}
		checked++
	}
	require.Greater(t, checked, 10, "the packages were listed")
	checkContexts(t)
}

// contextsBelow says which contexts each context of the application layer
// may import: only the kernel and the contexts listed (the README's context
// map). A context missing here fails, as does an import of a transport.
var contextsBelow = map[string][]string{
	"kernel":     {},
	"audiences":  {},
	"scoring":    {"audiences"},
	"webhooks":   {},
	"backoffice": {},
	"customers":  {"scoring", "audiences"},
	"privacy":    {"customers"},
	"campaigns":  {"scoring"},
	"giftcards":  {},
	"wallets":    {"giftcards"},
	"loyalty":    {"campaigns", "audiences", "wallets"},
	"checkout":   {"campaigns", "loyalty"},
	"pos":        {"checkout", "campaigns", "loyalty", "customers", "audiences", "wallets", "giftcards"},
	"nodes":      {"backoffice", "campaigns", "checkout", "customers", "loyalty", "pos", "scoring", "wallets", "giftcards", "webhooks"},
	"insights":   {"scoring"},
}

// topFloor are the contexts no context may import: reporting reads the
// contexts it reports on, so none of them may wait on it (a customer's
// predictive segment is scoring's, below customers and campaigns, not the
// dashboards').
var topFloor = []string{"insights"}

func checkContexts(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"app/...").Output()
	require.NoError(t, err)
	listed, wrong := contextImports(string(out), contextsBelow)
	require.Empty(t, wrong)
	require.Equal(t, len(contextsBelow), listed, "every context was listed")
}

// TestContextFloors: the context map keeps reporting on the top floor, and
// the check of the imports fails on a context importing one above it or
// a transport, and on a context missing from the map.
func TestContextFloors(t *testing.T) {
	for ctx, below := range contextsBelow {
		for _, top := range topFloor {
			require.NotContains(t, below, top, "app/%s may not import app/%s: it is on the top floor", ctx, top)
		}
	}
	line := func(ctx string, imports ...string) string {
		for i, imp := range imports {
			imports[i] = module + imp
		}
		return strings.Join(append([]string{module + "app/" + ctx}, imports...), " ") + "\n"
	}
	for _, tc := range []struct {
		name, listing string
		wrong         []string
	}{
		{"as mapped", line("customers", "app/kernel", "app/scoring", "ent") + line("insights", "app/scoring") +
			line("apptest", "app/insights", "app/pos"), nil},
		{"customers reads reporting", line("customers", "app/kernel", "app/insights"),
			[]string{"app/customers imports app/insights, not below it"}},
		{"campaigns reads reporting", line("campaigns", "app/insights"),
			[]string{"app/campaigns imports app/insights, not below it"}},
		{"scoring reads customers", line("scoring", "app/audiences", "app/customers"),
			[]string{"app/scoring imports app/customers, not below it"}},
		{"a transport", line("scoring", "rest"), []string{"app/scoring imports the transport " + module + "rest"}},
		{"not in the map", line("reports"), []string{"app/reports is not in the context map (contextsBelow)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, wrong := contextImports(tc.listing, contextsBelow)
			require.Equal(t, tc.wrong, wrong)
		})
	}
}

// contextImports reads listing, lines of a package of the module and the
// packages it imports, and returns how many contexts of the application
// it lists and what in them is out of place: a context missing from below,
// an import of a context not below it, an import of a transport.
func contextImports(listing string, below map[string][]string) (listed int, wrong []string) {
	transports := []string{"rest", "graph", "panel", "worker", "cmd"}
	for sc := bufio.NewScanner(strings.NewReader(listing)); sc.Scan(); {
		fields := strings.Fields(sc.Text())
		ctx, ok := strings.CutPrefix(fields[0], module+"app/")
		if !ok || ctx == "apptest" { // the tests' fixture over the whole application, no context
			continue
		}
		mayImport, known := below[ctx]
		if !known {
			wrong = append(wrong, fmt.Sprintf("app/%s is not in the context map (contextsBelow)", ctx))
			continue
		}
		listed++
		for _, imp := range fields[1:] {
			for _, tr := range transports {
				if imp == module+tr || strings.HasPrefix(imp, module+tr+"/") {
					wrong = append(wrong, fmt.Sprintf("app/%s imports the transport %s", ctx, imp))
				}
			}
			dep, inApp := strings.CutPrefix(imp, module+"app")
			if !inApp {
				continue
			}
			dep = strings.TrimPrefix(dep, "/")
			if dep != "kernel" && !slices.Contains(mayImport, dep) {
				wrong = append(wrong, fmt.Sprintf("app/%s imports app/%s, not below it", ctx, dep))
			}
		}
	}
	return listed, wrong
}
