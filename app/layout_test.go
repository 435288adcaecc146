package app_test

import (
	"bufio"
	"bytes"
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
	"insights":   {"audiences"},
	"webhooks":   {},
	"backoffice": {},
	"customers":  {"insights", "audiences"},
	"privacy":    {"customers"},
	"campaigns":  {"insights"},
	"wallets":    {},
	"loyalty":    {"campaigns", "audiences", "wallets"},
	"checkout":   {"campaigns", "loyalty"},
	"pos":        {"checkout", "campaigns", "loyalty", "customers", "audiences"},
	"nodes":      {"backoffice", "campaigns", "checkout", "customers", "insights", "loyalty", "pos", "wallets", "webhooks"},
}

func checkContexts(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"app/...").Output()
	require.NoError(t, err)
	transports := []string{"rest", "graph", "panel", "worker", "cmd"}
	listed := 0
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		fields := strings.Fields(sc.Text())
		ctx, ok := strings.CutPrefix(fields[0], module+"app/")
		if !ok || ctx == "apptest" { // the tests' fixture over the whole application, no context
			continue
		}
		below, known := contextsBelow[ctx]
		require.True(t, known, "app/%s is not in the context map (contextsBelow)", ctx)
		listed++
		for _, imp := range fields[1:] {
			for _, tr := range transports {
				require.False(t, imp == module+tr || strings.HasPrefix(imp, module+tr+"/"), "app/%s imports the transport %s", ctx, imp)
			}
			dep, inApp := strings.CutPrefix(imp, module+"app")
			if !inApp {
				continue
			}
			dep = strings.TrimPrefix(dep, "/")
			require.True(t, dep == "kernel" || slices.Contains(below, dep), "app/%s imports app/%s, not below it", ctx, dep)
		}
	}
	require.Equal(t, len(contextsBelow), listed, "every context was listed")
}
