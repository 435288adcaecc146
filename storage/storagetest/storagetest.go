// Package storagetest gives each test a fresh, isolated, migrated database: a
// SQLite file always, and PostgreSQL too when FIDELIZA_TEST_DATABASE_URL is
// set (a database per test, cloned from a migrated template and dropped after).
package storagetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent/schema/sealed"
	"github.com/fideliza/fideliza/storage"
)

// EnvPostgres names the administrative PostgreSQL URL of the tests.
const EnvPostgres = "FIDELIZA_TEST_DATABASE_URL"

// EnvDataKeyFile names the data key file the commands read; see init.
const EnvDataKeyFile = "FIDELIZA_DATA_KEY_FILE"

// EnvNoDataKey, set, leaves the test process without a data key: a child
// process of a test of how the commands find theirs.
const EnvNoDataKey = "FIDELIZA_TEST_NO_DATA_KEY"

// init gives the test process its data key: one file, copied here and
// named by FIDELIZA_DATA_KEY_FILE, so the commands a test runs in this
// process (serve, import) load the key its databases are sealed with.
//
// The key is a copy of one kept beside the templates (see Template), the
// same in every test process of the machine, so that a template one process
// filled with sealed documents opens in the others; each process has its own
// copy, so a test that rotates its process's key changes no other.
func init() {
	if os.Getenv(EnvNoDataKey) != "" {
		return
	}
	dir, err := os.MkdirTemp("", "fideliza-test-key-")
	if err != nil {
		panic(err)
	}
	path := filepath.Join(dir, "data.key")
	shared, err := sharedDataKey()
	if err == nil {
		err = copyFile(shared, path)
	}
	if err != nil {
		panic(err)
	}
	if err := sealed.Install(path); err != nil {
		panic(err)
	}
	if err := os.Setenv(EnvDataKeyFile, path); err != nil {
		panic(err)
	}
}

// Dialects returns the dialects the suite runs on here.
func Dialects() []string {
	if os.Getenv(EnvPostgres) != "" {
		return []string{dialect.SQLite, dialect.Postgres}
	}
	return []string{dialect.SQLite}
}

// Each runs fn as a subtest on a fresh migrated database of every dialect.
func Each(t *testing.T, fn func(t *testing.T, db *storage.DB)) {
	t.Helper()
	for _, d := range Dialects() {
		t.Run(d, func(t *testing.T) {
			fn(t, Open(t, d))
		})
	}
}

// Open returns a fresh migrated database of dialect, closed and removed when
// the test ends.
func Open(t testing.TB, dialectName string) *storage.DB {
	t.Helper()
	return OpenURL(t, URL(t, dialectName, true))
}

// Empty returns a fresh database of dialect with no schema at all, for tests
// of migrations themselves.
func Empty(t testing.TB, dialectName string) *storage.DB {
	t.Helper()
	return OpenURL(t, URL(t, dialectName, false))
}

// OpenURL opens the database at rawURL (one of URL's, say, as another
// process would) and closes it when the test ends.
func OpenURL(t testing.TB, rawURL string) *storage.DB {
	t.Helper()
	db, err := storage.Open(context.Background(), rawURL)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// URL creates a fresh database of dialect and returns its URL; migrated says
// whether it starts with the current schema.
func URL(t testing.TB, dialectName string, migrated bool) string {
	t.Helper()
	if dialectName == dialect.SQLite {
		path := filepath.Join(t.TempDir(), "test.db")
		if migrated {
			require.NoError(t, copyFile(sqliteTemplate(t), path))
		}
		return "sqlite://" + filepath.ToSlash(path)
	}
	admin := adminURL(t)
	template := "template0"
	if migrated {
		template = migratedTemplate(t, admin)
	}
	return clone(t, admin, template)
}

// CopyOf creates a copy of the database at rawURL, closed and checkpointed,
// and returns its URL: a copy of the SQLite file, or a PostgreSQL database
// cloned from it as a template (dropped when the test ends).
func CopyOf(t testing.TB, rawURL string) string {
	t.Helper()
	if path, ok := strings.CutPrefix(rawURL, "sqlite://"); ok {
		u := URL(t, dialect.SQLite, false)
		require.NoError(t, copyFile(path, strings.TrimPrefix(u, "sqlite://")))
		return u
	}
	admin := adminURL(t)
	src, err := url.Parse(rawURL)
	require.NoError(t, err)
	return clone(t, admin, strings.TrimPrefix(src.Path, "/"))
}

// clone creates a database from template and drops it when the test ends.
func clone(t testing.TB, admin, template string) string {
	t.Helper()
	name := "fz_test_" + randomSuffix()
	create(t, admin, template, name)
	t.Cleanup(func() {
		_, _ = adminPool(t, admin).Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`)
	})
	return withDatabase(admin, name)
}

// create creates the database name from template.
func create(t testing.TB, admin, template, name string) {
	t.Helper()
	adminDB := adminPool(t, admin)
	// Cloning a template needs it free of other sessions; the lock serialises
	// the clones of concurrent test processes.
	ctx := context.Background()
	conn, err := adminDB.Conn(ctx)
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, `SELECT pg_advisory_lock(4242)`)
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, `CREATE DATABASE `+name+` TEMPLATE `+template)
	_, _ = conn.ExecContext(ctx, `SELECT pg_advisory_unlock(4242)`)
	if err == nil {
		err = commitsWithoutDisk(ctx, conn, name)
	}
	conn.Close()
	require.NoError(t, err)
}

// commitsWithoutDisk has the test database name commit without waiting for
// the disk (synchronous_commit off): a test database is dropped at the end
// of its test and what a server crash would lose is no test's concern, while
// thousands of fsyncs would measure the shared machine's disk instead of the
// code. A setting of the database, not copied by CREATE DATABASE, so each
// one is given it.
func commitsWithoutDisk(ctx context.Context, conn *sql.Conn, name string) error {
	_, err := conn.ExecContext(ctx, `ALTER DATABASE `+name+` SET synchronous_commit = off`)
	return err
}

func adminURL(t testing.TB) string {
	u := os.Getenv(EnvPostgres)
	if u == "" {
		t.Skipf("%s is not set", EnvPostgres)
	}
	return u
}

var (
	adminMu    sync.Mutex
	adminPools = map[string]*sql.DB{}
	templates  = map[string]string{}
)

func adminPool(t testing.TB, admin string) *sql.DB {
	adminMu.Lock()
	defer adminMu.Unlock()
	if db, ok := adminPools[admin]; ok {
		return db
	}
	db, err := sql.Open("pgx", admin)
	require.NoError(t, err)
	adminPools[admin] = db
	return db
}

// schemaVersion names the schema a migrated database of dialect holds: a
// digest of our migrations and of the River version, whose own migrations
// run after ours.
func schemaVersion(t testing.TB, dialectName string) string {
	t.Helper()
	all, err := storage.Migrations(dialectName)
	require.NoError(t, err)
	h := sha256.New()
	for _, m := range all {
		io.WriteString(h, m.SQL)
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if strings.HasPrefix(dep.Path, "github.com/riverqueue/river") {
				io.WriteString(h, dep.Path+"@"+dep.Version)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// sqliteTemplate returns the path of a migrated SQLite file of the current
// schema, which tests copy instead of migrating each their own: made once
// per schema version in the system's temporary directory and shared by the
// test processes (migrations write nothing sealed, so any data key opens
// it). A process that finds none builds one beside it and renames it into
// place, so a concurrent reader never sees half a file.
func sqliteTemplate(t testing.TB) string {
	t.Helper()
	dir := templatesDir()
	path := filepath.Join(dir, "schema-"+schemaVersion(t, dialect.SQLite)+".db")
	sqliteTemplateMu.Lock()
	defer sqliteTemplateMu.Unlock()
	if _, err := os.Stat(path); err == nil {
		return path
	}
	require.NoError(t, os.MkdirAll(dir, 0o700))
	building, err := os.MkdirTemp(dir, "building-")
	require.NoError(t, err)
	defer os.RemoveAll(building)
	tmp := filepath.Join(building, "schema.db")
	ctx := context.Background()
	db, err := storage.Open(ctx, "sqlite://"+filepath.ToSlash(tmp))
	require.NoError(t, err)
	_, err = db.Migrate(ctx, quietLogger())
	require.NoError(t, err)
	_, err = db.SQL.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`) // the copy is the file alone
	require.NoError(t, err)
	require.NoError(t, db.Close())
	require.NoError(t, os.Rename(tmp, path))
	return path
}

var sqliteTemplateMu sync.Mutex

// templatesDir holds the SQLite templates and the tests' shared data key.
func templatesDir() string { return filepath.Join(os.TempDir(), "fideliza-test-templates") }

// sharedDataKey returns the path of the data key the test processes share,
// creating it once: made apart and linked into place, so that of processes
// starting at once all take the first one linked.
func sharedDataKey() (string, error) {
	dir := templatesDir()
	path := filepath.Join(dir, "data.key")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	building, err := os.MkdirTemp(dir, "building-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(building)
	tmp := filepath.Join(building, "data.key")
	if err := sealed.Create(tmp); err != nil {
		return "", err
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	return path, nil
}

// Template returns the URL of a fresh database of dialect (dropped or
// removed when the test ends) copied from the template kind at version:
// a migrated database that fill gave data that takes long to write (the
// living demo's year, say). The template is made on first use, once per
// kind and version across the test processes of the machine (the others
// wait for it), and kept for later runs: the SQLite file kind-version.db
// beside the schema templates, or the PostgreSQL database
// fz_tpl_<kind>_<digest of version and the data key>. Making one removes
// the kind's other versions.
// kind and version are lower-case letters, digits and underscores.
func Template(t testing.TB, dialectName, kind, version string, fill func(t testing.TB, db *storage.DB)) string {
	t.Helper()
	// The data key the template's documents are sealed with is part of its
	// version: the key file in the temporary directory may go (a reboot)
	// while the PostgreSQL server keeps the templates.
	key := requireSharedKey(t)
	sum := sha256.Sum256(append([]byte(version), key...))
	name := "fz_tpl_" + kind + "_" + hex.EncodeToString(sum[:])[:16]
	if dialectName == dialect.SQLite {
		path := filepath.Join(templatesDir(), name+".db")
		var copied string
		// Copied under the lock: making another version's template removes
		// this one.
		withFileLock(t, filepath.Join(templatesDir(), "fz_tpl_"+kind+".lock"), func() {
			if _, err := os.Stat(path); err != nil {
				buildSQLiteTemplate(t, kind, path, fill)
			}
			copied = CopyOf(t, "sqlite://"+filepath.ToSlash(path))
		})
		return copied
	}
	admin := adminURL(t)
	ctx := context.Background()
	conn, err := adminPool(t, admin).Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `SELECT pg_advisory_lock(hashtext($1))`, "fz_tpl_"+kind)
	require.NoError(t, err)
	defer conn.ExecContext(ctx, `SELECT pg_advisory_unlock(hashtext($1))`, "fz_tpl_"+kind)
	var exists bool
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists))
	if !exists {
		tmp := name + "_building"
		_, _ = conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+tmp+` WITH (FORCE)`)
		create(t, admin, migratedTemplate(t, admin), tmp)
		fillTemplate(t, withDatabase(admin, tmp), fill)
		_, err = conn.ExecContext(ctx, `ALTER DATABASE `+tmp+` RENAME TO `+name)
		require.NoError(t, err)
		rows, err := conn.QueryContext(ctx, `SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname <> $2`,
			"fz_tpl_"+kind+"_%", name)
		require.NoError(t, err)
		var others []string
		for rows.Next() {
			var other string
			require.NoError(t, rows.Scan(&other))
			others = append(others, other)
		}
		require.NoError(t, rows.Close())
		for _, other := range others {
			_, _ = conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+other)
		}
	}
	return clone(t, admin, name)
}

// requireSharedKey returns the data key the test processes share, failing
// the test when this process's key is no longer it: a test that rotates the
// data key rotates its process's (sealing is process-wide), and a template
// sealed under that key would not open in other processes. Such tests run
// in a process of their own.
func requireSharedKey(t testing.TB) []byte {
	t.Helper()
	shared, err := sharedDataKey()
	require.NoError(t, err)
	want, err := os.ReadFile(shared)
	require.NoError(t, err)
	got, err := os.ReadFile(os.Getenv(EnvDataKeyFile))
	require.NoError(t, err, "the test process's data key")
	require.Equal(t, want, got, "this test process rotated its data key (%s): a template it filled would not open elsewhere; "+
		"run the test that rotates it in a process of its own", os.Getenv(EnvDataKeyFile))
	return want
}

// fillTemplate opens the database at rawURL, has fill write its data, and
// closes it, checkpointed: a SQLite template is copied as its file alone.
func fillTemplate(t testing.TB, rawURL string, fill func(t testing.TB, db *storage.DB)) {
	t.Helper()
	db, err := storage.Open(context.Background(), rawURL)
	require.NoError(t, err)
	defer db.Close()
	fill(t, db)
	requireSharedKey(t) // still: nothing was sealed under another
	if db.Dialect == dialect.SQLite {
		_, err = db.SQL.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())
}

// withFileLock runs fn holding an exclusive lock on the file at path, which
// the test processes of the machine share.
func withFileLock(t testing.TB, path string, fn func()) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	fn()
}

// copyFile copies the file at from to a new file at to.
func copyFile(from, to string) error {
	raw, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, raw, 0o600)
}

// migratedTemplate returns the name of a template database holding the
// current migrations, creating it once per schema version across processes.
func migratedTemplate(t testing.TB, admin string) string {
	t.Helper()
	name := "fz_template_" + schemaVersion(t, dialect.Postgres)

	adminMu.Lock()
	done := templates[name] != ""
	adminMu.Unlock()
	if done {
		return name
	}
	db := adminPool(t, admin)
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	defer conn.Close()
	ctx := context.Background()
	_, err = conn.ExecContext(ctx, `SELECT pg_advisory_lock(4243)`)
	require.NoError(t, err)
	defer conn.ExecContext(ctx, `SELECT pg_advisory_unlock(4243)`)
	var exists bool
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists))
	if !exists {
		tmp := name + "_building"
		_, _ = conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+tmp+` WITH (FORCE)`)
		_, err = conn.ExecContext(ctx, `CREATE DATABASE `+tmp+` TEMPLATE template0`)
		require.NoError(t, err)
		require.NoError(t, commitsWithoutDisk(ctx, conn, tmp))
		mdb, err := storage.Open(ctx, withDatabase(admin, tmp))
		require.NoError(t, err)
		_, err = mdb.Migrate(ctx, quietLogger())
		require.NoError(t, err)
		require.NoError(t, mdb.Close())
		_, err = conn.ExecContext(ctx, `ALTER DATABASE `+tmp+` RENAME TO `+name)
		require.NoError(t, err)
	}
	adminMu.Lock()
	templates[name] = name
	adminMu.Unlock()
	return name
}

func withDatabase(rawURL, name string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + name
	q := u.Query()
	if q.Get("pool_max_conns") == "" {
		q.Set("pool_max_conns", testPoolMaxConns)
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// testPoolMaxConns bounds each test database's pool: go test runs packages
// and parallel tests side by side, and at the service's default (32) a few
// of them at once exhaust a stock server's max_connections (100), failing
// requests with 503 "too many clients". Requests beyond it wait in the pool.
const testPoolMaxConns = "8"

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return strings.ToLower(hex.EncodeToString(b))
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// Kept returns the URL of a migrated database of dialect kept across test
// processes under name, for benchmarks whose data takes long to write: the
// SQLite file name.db in dir, or the PostgreSQL database name (never
// dropped); created says whether it was created now, empty. Whoever keeps
// one removes it (rm, DROP DATABASE) when done.
func Kept(t testing.TB, dialectName, dir, name string) (rawURL string, created bool) {
	t.Helper()
	if dialectName == dialect.SQLite {
		path := filepath.Join(dir, name+".db")
		rawURL = "sqlite://" + filepath.ToSlash(path)
		if _, err := os.Stat(path); err == nil {
			return rawURL, false
		}
		db, err := storage.Open(context.Background(), rawURL)
		require.NoError(t, err)
		_, err = db.Migrate(context.Background(), quietLogger())
		require.NoError(t, err)
		require.NoError(t, db.Close())
		return rawURL, true
	}
	admin := adminURL(t)
	var exists bool
	require.NoError(t, adminPool(t, admin).QueryRowContext(context.Background(),
		`SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists))
	if !exists {
		create(t, admin, migratedTemplate(t, admin), name)
	}
	return withDatabase(admin, name), !exists
}

// buildSQLiteTemplate fills a migrated copy with fill, moves it to path and
// removes the templates of kind's other versions.
func buildSQLiteTemplate(t testing.TB, kind, path string, fill func(t testing.TB, db *storage.DB)) {
	t.Helper()
	building, err := os.MkdirTemp(templatesDir(), "building-")
	require.NoError(t, err)
	defer os.RemoveAll(building)
	tmp := filepath.Join(building, "template.db")
	require.NoError(t, copyFile(sqliteTemplate(t), tmp))
	fillTemplate(t, "sqlite://"+filepath.ToSlash(tmp), fill)
	require.NoError(t, os.Rename(tmp, path))
	others, _ := filepath.Glob(filepath.Join(templatesDir(), "fz_tpl_"+kind+"_*.db"))
	for _, other := range others {
		if other != path {
			_ = os.Remove(other)
		}
	}
}
