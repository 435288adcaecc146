package sealed

import (
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// newKeyFile creates a key file in a test directory and installs it.
func newKeyFile(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data.key")
	require.NoError(t, Create(path))
	active.Store(nil) // each test its own index key
	require.NoError(t, Install(path))
	return path
}

func TestSealAndOpen(t *testing.T) {
	newKeyFile(t)
	for _, plain := range []string{"52998224725", "11222333000181", "12ABC34501DE35", "XQWERTYUIOPASD"} {
		t.Run(plain, func(t *testing.T) {
			a, err := Seal(plain)
			require.NoError(t, err)
			b, err := Seal(plain)
			require.NoError(t, err)
			require.NotContains(t, a, plain)
			require.NotEqual(t, a, b, "a fresh nonce each time")
			require.True(t, SealedUnder(a, "k1"), a)
			for _, v := range []string{a, b} {
				got, err := Open(v)
				require.NoError(t, err)
				require.Equal(t, plain, got)
			}
			i1, err := Index(plain)
			require.NoError(t, err)
			i2, err := Index(plain)
			require.NoError(t, err)
			require.Equal(t, i1, i2, "the blind index is deterministic")
			require.Len(t, i1, 22)
			require.NotContains(t, i1, plain)
		})
	}
	other, err := Index("52998224726")
	require.NoError(t, err)
	same, err := Index("52998224725")
	require.NoError(t, err)
	require.NotEqual(t, other, same)

	empty, err := Seal("")
	require.NoError(t, err)
	require.Empty(t, empty)
	fromBefore, err := Open("52998224725")
	require.NoError(t, err)
	require.Equal(t, "52998224725", fromBefore, "a value from before sealing reads as it is")
}

func TestOpenRefusesDamagedValues(t *testing.T) {
	newKeyFile(t)
	v, err := Seal("52998224725")
	require.NoError(t, err)
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(v, "k1:"))
	require.NoError(t, err)
	raw[len(raw)-1] ^= 1
	for name, bad := range map[string]string{
		"tampered":     "k1:" + base64.RawURLEncoding.EncodeToString(raw),
		"unknown key":  "k7:" + strings.TrimPrefix(v, "k1:"),
		"too short":    "k1:AAAA",
		"not base64":   "k1:***",
		"other key id": "k2" + strings.TrimPrefix(v, "k1"),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Open(bad)
			require.Error(t, err)
		})
	}
}

func TestAddKeySealsUnderItAndKeepsOldValuesReadable(t *testing.T) {
	path := newKeyFile(t)
	old, err := Seal("52998224725")
	require.NoError(t, err)
	oldIndex := MustIndex("52998224725")

	id, err := AddKey(path, false)
	require.NoError(t, err)
	require.Equal(t, "k2", id)
	current, err := CurrentKeyID()
	require.NoError(t, err)
	require.Equal(t, "k2", current)
	fresh, err := Seal("52998224725")
	require.NoError(t, err)
	require.True(t, SealedUnder(fresh, "k2"), fresh)
	for _, v := range []string{old, fresh} {
		got, err := Open(v)
		require.NoError(t, err)
		require.Equal(t, "52998224725", got)
	}
	require.Equal(t, oldIndex, MustIndex("52998224725"), "the index key does not rotate")

	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
}

// TestOpenReadsAKeyAnotherProcessAdded plays a process that has not read the
// newest key yet when it meets a value sealed under it.
func TestOpenReadsAKeyAnotherProcessAdded(t *testing.T) {
	path := newKeyFile(t)
	f, err := read(path)
	require.NoError(t, err)
	secret := make([]byte, secretBytes)
	_, err = rand.Read(secret)
	require.NoError(t, err)
	f.Keys = append(f.Keys, fileKey{ID: "k2", Secret: secret, CreatedAt: time.Now().UTC()})
	require.NoError(t, write(path, f, true))

	aead, err := newAEAD(secret)
	require.NoError(t, err)
	nonce := make([]byte, aead.NonceSize())
	box := append(append([]byte("k2:"), nonce...), aead.Seal(nil, nonce, []byte("11222333000181"), []byte("k2"))...)
	got, err := OpenBytes(box)
	require.NoError(t, err)
	require.Equal(t, "11222333000181", string(got))
}

func TestKeyFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.key")
	require.NoError(t, Create(path))
	require.ErrorContains(t, Create(path), "already exists")
	require.NoError(t, os.Chmod(path, 0o644))
	active.Store(nil)
	require.ErrorContains(t, Install(path), "want 0600")

	other := filepath.Join(dir, "other.key")
	require.NoError(t, Create(other))
	require.NoError(t, os.Chmod(path, 0o600))
	require.NoError(t, Install(path))
	require.ErrorContains(t, Install(other), "index key differs")

	garbage := filepath.Join(dir, "garbage.key")
	require.NoError(t, os.WriteFile(garbage, []byte(`{"keys":[]}`), 0o600))
	require.ErrorContains(t, Install(garbage), "want an index_key")
	require.ErrorContains(t, Install(filepath.Join(dir, "missing.key")), "no such file")
}

func TestSealBytes(t *testing.T) {
	newKeyFile(t)
	chunk := []byte("cpf,name,email\n52998224725,Ana,ana@example.invalid\n")
	sealedChunk, err := SealBytes(chunk)
	require.NoError(t, err)
	require.NotContains(t, string(sealedChunk), "52998224725")
	got, err := OpenBytes(sealedChunk)
	require.NoError(t, err)
	require.Equal(t, chunk, got)
	legacy, err := OpenBytes(chunk)
	require.NoError(t, err)
	require.Equal(t, chunk, legacy, "a chunk from before sealing reads as it is")
}

// BenchmarkIndex is the cost a lookup by document adds (identify at the till).
func BenchmarkIndex(b *testing.B) {
	newKeyFile(b)
	b.ReportAllocs()
	for b.Loop() {
		MustIndex("52998224725")
	}
}

// BenchmarkSealAndOpen is the cost of writing and reading a document.
func BenchmarkSealAndOpen(b *testing.B) {
	newKeyFile(b)
	b.ReportAllocs()
	for b.Loop() {
		v, err := Seal("52998224725")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Open(v); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStagedKey: a staged key opens what another process seals with it but
// does not seal here until promoted.
func TestStagedKey(t *testing.T) {
	path := newKeyFile(t)
	id, err := AddKey(path, true)
	require.NoError(t, err)
	require.Equal(t, "k2", id)
	current, err := CurrentKeyID()
	require.NoError(t, err)
	require.Equal(t, "k1", current, "a staged key does not seal")
	v, err := Seal("52998224725")
	require.NoError(t, err)
	require.True(t, SealedUnder(v, "k1"), v)

	id, err = AddKey(path, true)
	require.NoError(t, err)
	require.Equal(t, "k3", id)
	current, err = CurrentKeyID()
	require.NoError(t, err)
	require.Equal(t, "k1", current, "still k1 while k2 and k3 are staged")

	promoted, err := Promote(path)
	require.NoError(t, err)
	require.True(t, promoted)
	current, err = CurrentKeyID()
	require.NoError(t, err)
	require.Equal(t, "k3", current, "the newest key seals once promoted")
	promoted, err = Promote(path)
	require.NoError(t, err)
	require.False(t, promoted, "nothing staged")
	got, err := Open(v)
	require.NoError(t, err)
	require.Equal(t, "52998224725", got)

	f, err := read(path)
	require.NoError(t, err)
	f.Current = "k9"
	require.NoError(t, write(path, f, true))
	active.Store(nil)
	require.ErrorContains(t, Install(path), `current key "k9" is not in its keys`)
}
