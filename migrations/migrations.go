// Package migrations holds the versioned schema migrations of both databases:
// sqlite/NNNN_name.sql and postgres/NNNN_name.sql, applied in order by the
// storage package. A migration is never edited once it is on main; a change
// of ent/schema adds the next file (TestMigrationsMatchSchema prints its SQL).
package migrations

import "embed"

// FS holds the migration files of both dialects.
//
//go:embed sqlite/*.sql postgres/*.sql
var FS embed.FS
