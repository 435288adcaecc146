//go:build tools

package dashboardclient

// Keeps genqlient, the generator of generated.go, in go.mod and go.sum.
import _ "github.com/Khan/genqlient"
