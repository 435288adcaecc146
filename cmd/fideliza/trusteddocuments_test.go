package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestServeRefusesBadTrustedDocuments: serve does not start on a file of
// trusted documents it cannot read, or that holds a hash other than its
// document's, or a document the schema refuses; the error names the flag,
// the file and the fault.
func TestServeRefusesBadTrustedDocuments(t *testing.T) {
	t.Parallel()
	u := storagetest.URL(t, dialect.SQLite, false)
	dir := t.TempDir()
	const doc = "{ __typename }"
	hash := sha(doc)
	bomb := "subscription { salesProcessed { ...F0 } }"
	for i := range 31 {
		bomb += fmt.Sprintf(" fragment F%d on Event { id ...F%d ...F%d }", i, i+1, i+1)
	}
	bomb += " fragment F31 on Event { id }"
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"missing file", filepath.Join(dir, "absent.json"), "no such file or directory"},
		{"not JSON", file("bad.json", `{"`+hash+`": `), "not a JSON object of SHA-256 hashes to documents"},
		{"a list", file("list.json", `["`+doc+`"]`), "not a JSON object of SHA-256 hashes to documents"},
		{"no document", file("empty.json", `{}`), "no document"},
		{"a hash not the document's", file("hash.json", `{"`+hash+`": "{ __typename __typename }"}`), "is not the SHA-256 of its document"},
		{"a document the schema refuses", file("schema.json", `{"`+sha(`{ nothing }`)+`": "{ nothing }"}`), "does not validate: "},
		// Refused before the validation, which would take minutes.
		{"a document over the limits", file("bomb.json", `{"`+sha(bomb)+`": "`+bomb+`"}`), "is over the limits: the document selects over 10000 fields"},
	} {
		cmd := newRootCommand(io.Discard, io.Discard)
		cmd.SetArgs([]string{"--database-url", u, "serve", "--addr", "127.0.0.1:0", "--graphql-trusted-documents", tc.path})
		err := cmd.ExecuteContext(context.Background())
		require.Error(t, err, tc.name)
		require.Contains(t, err.Error(), "--graphql-trusted-documents (FIDELIZA_GRAPHQL_TRUSTED_DOCUMENTS): trusted documents", tc.name)
		require.Contains(t, err.Error(), tc.want, tc.name)
	}
}

func sha(doc string) string {
	sum := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(sum[:])
}
