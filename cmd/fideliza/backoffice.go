package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fideliza/fideliza/app/backoffice"
)

// backofficeFlags are serve's settings for back-office web apps
// (docs/backoffice.md): the installation's CORS origins.
type backofficeFlags struct {
	corsOrigins []string
}

func (b *backofficeFlags) register(f *pflag.FlagSet) {
	var origins []string
	if v := env("FIDELIZA_CORS_ORIGINS", ""); v != "" {
		origins = strings.Split(v, ",")
	}
	f.StringSliceVar(&b.corsOrigins, "cors-origins", origins,
		"origins (scheme://host[:port]) of back-office web apps allowed to call /graphql, /v1 and /v2 from a browser for every tenant, comma-separated; each tenant adds its own (env FIDELIZA_CORS_ORIGINS)")
}

// origins checks the CORS origins given.
func (b *backofficeFlags) origins() ([]string, error) {
	out := make([]string, 0, len(b.corsOrigins))
	for _, o := range b.corsOrigins {
		n, err := backoffice.CORSOrigin(strings.TrimSpace(o))
		if err != nil {
			return nil, fmt.Errorf("--cors-origins (FIDELIZA_CORS_ORIGINS): %w", err)
		}
		out = append(out, n)
	}
	return out, nil
}
