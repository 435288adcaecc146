package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// buildInfo is what the binary knows of its own making: the module's
// version (a tag with go install …@vX, "(devel)" from a checkout) and the
// VCS revision go build stamped into it.
type buildInfo struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"` // built from a working tree with uncommitted changes
	Go       string `json:"go"`
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: "(unknown)", Go: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Version = info.Main.Version
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the version as one line: version, revision (+modified), Go.
func (b buildInfo) String() string {
	rev := b.Revision
	if rev == "" {
		rev = "no revision"
	} else if b.Modified {
		rev += "+modified"
	}
	return fmt.Sprintf("fideliza %s (%s, %s)", b.Version, rev, b.Go)
}

func newVersionCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and VCS revision this binary was built from",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			b := readBuildInfo()
			return g.print(b, b.String())
		},
	}
}
