package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent/schema/sealed"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// The child processes of TestDataKeyBesideTheDatabase read their step and
// directory from these.
const (
	envKeyStep = "FIDELIZA_TEST_KEY_STEP"
	envKeyDir  = "FIDELIZA_TEST_KEY_DIR"
)

// TestDataKeyBesideTheDatabase: with the embedded default and no key file
// given, the first start creates one beside the database file (mode 0600)
// and says so; later starts use it; a start whose key does not open the
// documents already sealed is refused, and the key file it made is removed.
// On a database from before signing keys were sealed, that start is refused
// before the migration seals them with its key (which would lose them), and
// the next start with the right key seals them. Each start is a process of
// its own (this test binary again), for a process holds one data key.
func TestDataKeyBesideTheDatabase(t *testing.T) {
	if step := os.Getenv(envKeyStep); step != "" {
		dataKeyStep(t, step, os.Getenv(envKeyDir))
		return
	}
	t.Parallel()
	dir := t.TempDir()
	key := filepath.Join(dir, "f.db.key")
	run := func(step string) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestDataKeyBesideTheDatabase$", "-test.count=1", "-test.v")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, storagetest.EnvDataKeyFile+"=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, storagetest.EnvNoDataKey+"=1", envKeyStep+"="+step, envKeyDir+"="+dir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "step %s:\n%s", step, out)
		require.Contains(t, string(out), "--- PASS", "step %s ran:\n%s", step, out)
	}

	run("first")
	info, err := os.Stat(key)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	run("again")

	run("downgrade")
	require.NoError(t, os.Rename(key, key+".lost"))
	run("lost")
	_, err = os.Stat(key)
	require.ErrorIs(t, err, fs.ErrNotExist, "the key made for a database it could not open is removed")
	u := "sqlite://" + filepath.ToSlash(filepath.Join(dir, "f.db"))
	require.Equal(t, []string{"clear"}, signingKeyStates(t, u), "the refused start sealed nothing")

	require.NoError(t, os.Rename(key+".lost", key))
	run("again")
	require.Equal(t, []string{"k1"}, signingKeyStates(t, u))
}

// signingKeyStates are the key ids the signing keys of the database at
// dbURL are sealed under, "clear" for one in clear.
func signingKeyStates(t *testing.T, dbURL string) []string {
	t.Helper()
	db, err := storage.Open(context.Background(), dbURL)
	require.NoError(t, err)
	defer db.Close()
	var states []string
	for _, stored := range queryStrings(t, db.SQL, `SELECT private_key FROM signing_keys`) {
		id, _, ok := strings.Cut(stored, ":")
		if !ok || !strings.HasPrefix(id, "k") {
			id = "clear"
		}
		states = append(states, id)
	}
	return states
}

// dataKeyStep is one start of TestDataKeyBesideTheDatabase, in a child
// process without a data key.
func dataKeyStep(t *testing.T, step, dir string) {
	u := "sqlite://" + filepath.ToSlash(filepath.Join(dir, "f.db"))
	logs := &syncBuffer{}
	switch step {
	case "first":
		startServe(t, logs, u)
		require.Contains(t, logs.String(), "created the data key file", "serve says so")
		require.Contains(t, logs.String(), filepath.Join(dir, "f.db.key"))
		require.Contains(t, logs.String(), "the data key file is in the database's directory", "serve warns of the key beside the database")
		tenant, err := withCustomer(t, logs, u).Ent.Tenant.Query().OnlyID(viewer.SystemContext(context.Background()))
		require.NoError(t, err)
		fideliza(t, logs, u, "user", "token", "--tenant", tenant) // the first signing key
	case "again":
		fideliza(t, logs, u, "migrate")
		require.NotContains(t, logs.String(), "created the data key file")
	case "downgrade":
		_, err := storage.UseDataKey(u, "")
		require.NoError(t, err)
		unsealSigningKeys(t, u)
	case "lost":
		var out bytes.Buffer
		cmd := newRootCommand(&out, logs)
		cmd.SetArgs([]string{"--database-url", u, "migrate"})
		err := cmd.ExecuteContext(context.Background())
		require.ErrorContains(t, err, "the data key file does not open this database's documents")
	}
}

// TestDataKeyCommands: create-data writes a key file; rotate-data moves the
// database's documents to a new key and says how many; add-data stages a key
// that the next rotate-data makes seal.
func TestDataKeyCommands(t *testing.T) {
	t.Parallel()
	if !inOwnProcess(t) {
		return
	}
	logs := &syncBuffer{}
	fresh := filepath.Join(t.TempDir(), "data.key")
	created := fideliza(t, logs, "sqlite://unused.db", "--data-key-file", fresh, "keys", "create-data")
	require.Equal(t, map[string]any{"data_key_file": fresh, "key_id": "k1"}, created)
	info, err := os.Stat(fresh)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	u := storagetest.URL(t, dialect.SQLite, true)
	db := withCustomer(t, logs, u)
	before, err := sealed.CurrentKeyID()
	require.NoError(t, err)

	rotated := fideliza(t, logs, u, "keys", "rotate-data")
	require.NotEqual(t, before, rotated["key_id"])
	require.Equal(t, false, rotated["resumed"])
	require.GreaterOrEqual(t, rotated["resealed"], float64(1), "the customer's document, at least")
	remaining, err := db.RemainingToReseal(context.Background())
	require.NoError(t, err)
	require.Zero(t, remaining)

	// A staged key seals nowhere until rotate-data promotes it.
	staged := fideliza(t, logs, u, "keys", "add-data")
	require.Equal(t, true, staged["staged"])
	current, err := sealed.CurrentKeyID()
	require.NoError(t, err)
	require.Equal(t, rotated["key_id"], current)
	promoted := fideliza(t, logs, u, "keys", "rotate-data")
	require.Equal(t, staged["key_id"], promoted["key_id"])
	require.Equal(t, true, promoted["promoted"])
	require.Equal(t, false, promoted["resumed"])
	require.GreaterOrEqual(t, promoted["resealed"], float64(1))
}

// withCustomer creates a tenant and a customer of it in the database at u,
// and returns the database, open until the test ends.
func withCustomer(t *testing.T, logs *syncBuffer, u string) *storage.DB {
	t.Helper()
	tenant := fideliza(t, logs, u, "tenant", "create", "--name", "Mercado")
	db, err := storage.Open(context.Background(), u)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	_, err = db.Ent.Customer.Create().SetTenantID(tenant["id"].(string)).SetName("Ana").SetDocument("52998224725").
		Save(viewer.SystemContext(context.Background()))
	require.NoError(t, err)
	return db
}

// envOwnProcess names the test a child process of inOwnProcess runs.
const envOwnProcess = "FIDELIZA_TEST_OWN_PROCESS"

// inOwnProcess runs the test again in a child process (this test binary,
// with a copy of the data key of its own) and reports whether this is that
// child, which runs the test's body. A test that rotates the data key runs
// so: sealing is process-wide, and the demo's year, which other tests of
// this process copy from a template shared by the test processes
// (storagetest.Template), must be sealed under the key they all share.
func inOwnProcess(t *testing.T) bool {
	t.Helper()
	if os.Getenv(envOwnProcess) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v", "-test.timeout=20m")
	cmd.Env = append(os.Environ(), envOwnProcess+"="+t.Name())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s in its own process:\n%s", t.Name(), out)
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "%s ran in its own process:\n%s", t.Name(), out)
	return false
}
