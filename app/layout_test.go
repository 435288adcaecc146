package app_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/fideliza/fideliza/"

// TestLayout keeps the layers apart: only worker/ and cmd/ depend on the
// worker package (the application inserts jobs through package jobs), no
// application package depends on the test clock, and the domain packages
// import no transport.
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
}
