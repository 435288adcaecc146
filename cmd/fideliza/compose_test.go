package main

import (
	"encoding/json"
	"io"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/oasdiff/yaml"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// composeFile is deploy/compose.yaml, relative to this package.
const composeFile = "../../deploy/compose.yaml"

// composeService is what the test reads of a Compose service.
type composeService struct {
	Image       string            `json:"image"`
	Command     []string          `json:"command"`
	Environment map[string]string `json:"environment"`
	Profiles    []string          `json:"profiles"`
	DependsOn   map[string]struct {
		Condition string `json:"condition"`
	} `json:"depends_on"`
}

// TestComposeFile checks deploy/compose.yaml without Docker: it runs the
// tested topology (migrate once, after PostgreSQL is healthy; two serve
// --no-worker and two worker after it), every fideliza command and flag it
// gives is one the binary accepts, every FIDELIZA_ variable it sets is one
// the command reads, the processes reach the compose file's PostgreSQL, and
// the collector and Redis are in their own profiles.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(composeFile)
	require.NoError(t, err)
	var file struct {
		Services map[string]composeService `json:"services"`
	}
	// Compose's interpolation, with no variable set: ${NAME:-default}.
	raw = regexp.MustCompile(`\$\{[A-Z_]+:-([^}]*)\}`).ReplaceAll(raw, []byte("$1"))
	require.NotContains(t, string(raw), "${", "a variable without a default")
	asJSON, err := yaml.YAMLToJSON(raw)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(asJSON, &file))

	topology := map[string]struct {
		command string // the fideliza command
		after   string // the service it waits for
		cond    string // and the condition
	}{
		"migrate":  {"migrate", "postgres", "service_healthy"},
		"serve-1":  {"serve", "migrate", "service_completed_successfully"},
		"serve-2":  {"serve", "migrate", "service_completed_successfully"},
		"worker-1": {"worker", "migrate", "service_completed_successfully"},
		"worker-2": {"worker", "migrate", "service_completed_successfully"},
		"data-key": {"keys create-data", "", ""},
	}
	for name, want := range topology {
		s, ok := file.Services[name]
		require.True(t, ok, "service %s", name)
		require.Equal(t, "fideliza", s.Image, name)
		cmd := composeCommand(t, name, s)
		require.Equal(t, want.command, strings.TrimPrefix(cmd, "fideliza "), name)
		if want.after != "" {
			require.Equal(t, want.cond, s.DependsOn[want.after].Condition, "%s waits for %s", name, want.after)
			require.Empty(t, s.Profiles, "%s runs without a profile", name)
		}
		if want.command == "serve" {
			require.Contains(t, s.Command, "--no-worker", "%s serves HTTP only", name)
		}
		db, err := url.Parse(s.Environment["FIDELIZA_DATABASE_URL"])
		require.NoError(t, err)
		require.Equal(t, "postgres", db.Scheme, name)
		require.Contains(t, file.Services, db.Hostname(), "%s's database is a service of the file", name)
		require.Contains(t, s.Environment, "OTEL_EXPORTER_OTLP_ENDPOINT", "%s exports traces when given a collector", name)
	}
	require.Equal(t, []string{"setup"}, file.Services["data-key"].Profiles, "the data key is made once, on demand")
	require.Equal(t, []string{"otel"}, file.Services["otel-collector"].Profiles)
	require.Equal(t, []string{"redis"}, file.Services["redis"].Profiles)
	for name, s := range file.Services {
		if s.Image == "fideliza" {
			require.Contains(t, topology, name, "a fideliza service the test does not know")
		}
	}
}

// composeCommand parses a service's command with fideliza's own command
// tree, checks that each FIDELIZA_ variable of its environment is one the
// command reads (named in a flag's help as "env NAME"), and returns the
// command's path.
func composeCommand(t *testing.T, service string, s composeService) string {
	t.Helper()
	root := newRootCommand(io.Discard, io.Discard)
	cmd, rest, err := root.Find(s.Command)
	require.NoError(t, err, "%s: %v", service, s.Command)
	require.NotEqual(t, root, cmd, "%s: %v names no command", service, s.Command)
	require.NoError(t, cmd.ParseFlags(rest), "%s: %v", service, s.Command)
	require.Empty(t, cmd.Flags().Args(), "%s: arguments that are no flag", service)
	var read []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { read = append(read, f.Usage) })
	for key := range s.Environment {
		if strings.HasPrefix(key, "FIDELIZA_") {
			require.True(t, slices.ContainsFunc(read, func(u string) bool { return strings.Contains(u, "env "+key) }),
				"%s sets %s, which %s does not read", service, key, cmd.CommandPath())
		}
	}
	return cmd.CommandPath()
}
