package main

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVersion: `fideliza version` names the binary's module version, its
// VCS revision when the build stamped one, and Go's version, as a line or
// as JSON (serve's start line carries it too: TestIdleServeIsQuiet).
func TestVersion(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	cmd := newRootCommand(&out, &bytes.Buffer{})
	cmd.SetArgs([]string{"version"})
	require.NoError(t, cmd.ExecuteContext(context.Background()))
	require.Regexp(t, `^fideliza \S+ \((no revision|[0-9a-f]{40}(\+modified)?), go\S+\)\n$`, out.String())

	v := fideliza(t, &bytes.Buffer{}, "sqlite://unused.db", "version")
	require.Equal(t, runtime.Version(), v["go"])
	require.NotEmpty(t, v["version"])

	require.Equal(t, "fideliza (devel) (0123456789abcdef0123456789abcdef01234567+modified, go1.26.8)",
		buildInfo{Version: "(devel)", Revision: "0123456789abcdef0123456789abcdef01234567", Modified: true, Go: "go1.26.8"}.String())
}
