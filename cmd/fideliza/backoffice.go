package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/graph"
)

// backofficeFlags are serve's settings for back-office web apps
// (docs/backoffice.md): the installation's CORS origins, and the file of
// trusted GraphQL documents.
type backofficeFlags struct {
	corsOrigins []string
	trustedFile string
}

func (b *backofficeFlags) register(f *pflag.FlagSet) {
	var origins []string
	if v := env("FIDELIZA_CORS_ORIGINS", ""); v != "" {
		origins = strings.Split(v, ",")
	}
	f.StringSliceVar(&b.corsOrigins, "cors-origins", origins,
		"origins (scheme://host[:port]) of back-office web apps allowed to call /graphql, /v1 and /v2 from a browser for every tenant, comma-separated; each tenant adds its own (env FIDELIZA_CORS_ORIGINS)")
	f.StringVar(&b.trustedFile, "graphql-trusted-documents", env("FIDELIZA_GRAPHQL_TRUSTED_DOCUMENTS", ""),
		"a JSON file of SHA-256 hashes to GraphQL documents: when given, only those documents run, sent whole or by hash (env FIDELIZA_GRAPHQL_TRUSTED_DOCUMENTS)")
}

// trustedDocuments loads the file of trusted documents; none without the
// flag.
func (b *backofficeFlags) trustedDocuments() (*graph.TrustedDocuments, error) {
	if b.trustedFile == "" {
		return nil, nil
	}
	docs, err := graph.LoadTrustedDocuments(b.trustedFile)
	if err != nil {
		return nil, fmt.Errorf("--graphql-trusted-documents (FIDELIZA_GRAPHQL_TRUSTED_DOCUMENTS): %w", err)
	}
	return docs, nil
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
