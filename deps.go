//go:build tools

package tools

import (
	_ "entgo.io/contrib/entgql"
	_ "entgo.io/ent"
	_ "github.com/99designs/gqlgen"
	_ "github.com/coreos/go-oidc/v3/oidc"
	_ "github.com/go-chi/chi/v5"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/riverqueue/river"
	_ "github.com/riverqueue/river/riverdriver/riverdatabasesql"
	_ "github.com/riverqueue/river/riverdriver/riversqlite"
	_ "modernc.org/sqlite"
)
