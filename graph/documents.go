package graph

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fideliza/fideliza/graph/generated"
)

// Persisted documents (docs/backoffice.md, "Trusted documents"): automatic
// persisted queries (Apollo's protocol: extensions.persistedQuery with the
// document's SHA-256; a hash alone the server does not know answers
// PersistedQueryNotFound, and the client sends the document with it) over
// a bounded cache; or, in trusted mode, only the documents of a file given
// at start run, whether sent whole or by hash.

// The APQ cache's bounds: documents, and bytes of hashes and documents.
const (
	apqEntries = 1000
	apqBytes   = 8 << 20
)

// codeNotTrusted refuses a document trusted mode does not run.
const codeNotTrusted = "document_not_trusted"

// persistedDocuments returns the extensions that read persisted documents:
// APQ over a bounded cache, or trusted mode's documents only.
func persistedDocuments(trusted *TrustedDocuments) []graphql.HandlerExtension {
	if trusted == nil {
		return []graphql.HandlerExtension{extension.AutomaticPersistedQuery{Cache: newAPQCache()}}
	}
	return []graphql.HandlerExtension{extension.AutomaticPersistedQuery{Cache: trusted}, trustedOnly{trusted}}
}

// apqCache remembers the documents of automatic persisted queries, the
// least recently used going first past apqEntries or apqBytes.
type apqCache struct {
	mu    sync.Mutex
	lru   *simplelru.LRU[string, string]
	bytes int
}

func newAPQCache() *apqCache {
	c := &apqCache{}
	c.lru, _ = simplelru.NewLRU(apqEntries, func(hash, doc string) { c.bytes -= len(hash) + len(doc) })
	return c
}

func (c *apqCache) Get(_ context.Context, hash string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Get(hash)
}

func (c *apqCache) Add(_ context.Context, hash, doc string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru.Contains(hash) {
		return // the same document: its hash says so
	}
	c.lru.Add(hash, doc)
	c.bytes += len(hash) + len(doc)
	for c.bytes > apqBytes && c.lru.Len() > 1 {
		c.lru.RemoveOldest()
	}
}

// TrustedDocuments are the only documents a server in trusted mode runs,
// by the hex SHA-256 of their text. As APQ's cache it finds them by hash
// and remembers nothing new.
type TrustedDocuments struct {
	byHash map[string]string
}

// Len is how many documents there are; none for nil (not trusted mode).
func (t *TrustedDocuments) Len() int {
	if t == nil {
		return 0
	}
	return len(t.byHash)
}

// Get finds a document by its hash.
func (t *TrustedDocuments) Get(_ context.Context, hash string) (string, bool) {
	doc, ok := t.byHash[hash]
	return doc, ok
}

// Add does nothing: the documents are the file's.
func (*TrustedDocuments) Add(context.Context, string, string) {}

// LoadTrustedDocuments reads a JSON object of hashes to documents (the
// persisted-documents.json of graphql-codegen's client preset with
// hashAlgorithm sha256): each hash must be the hex SHA-256 of its
// document, and each document must validate against the schema. An error
// names the file and what is wrong.
func LoadTrustedDocuments(path string) (*TrustedDocuments, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trusted documents: %w", err)
	}
	var byHash map[string]string
	dec := json.NewDecoder(bytes.NewReader(raw))
	err = dec.Decode(&byHash)
	if err == nil && dec.More() {
		err = errors.New("more after the object")
	}
	if err != nil {
		return nil, fmt.Errorf("trusted documents %s: not a JSON object of SHA-256 hashes to documents: %w", path, err)
	}
	if len(byHash) == 0 {
		return nil, fmt.Errorf("trusted documents %s: no document", path)
	}
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{}}).Schema()
	t := &TrustedDocuments{byHash: make(map[string]string, len(byHash))}
	for _, hash := range slices.Sorted(maps.Keys(byHash)) {
		doc := byHash[hash]
		if sum := documentHash(doc); sum != strings.ToLower(hash) {
			return nil, fmt.Errorf("trusted documents %s: %q is not the SHA-256 of its document (%s is)", path, hash, sum)
		}
		if gerr := precheck(doc); gerr != nil {
			return nil, fmt.Errorf("trusted documents %s: the document of %s is over the limits: %s", path, hash, gerr.Message)
		}
		if _, errs := gqlparser.LoadQueryWithRules(schema, doc, nil); len(errs) > 0 { // nil: the default rules
			return nil, fmt.Errorf("trusted documents %s: the document of %s does not validate: %w", path, hash, errs[0])
		}
		t.byHash[strings.ToLower(hash)] = doc
	}
	return t, nil
}

func documentHash(doc string) string {
	sum := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(sum[:])
}

// trustedOnly refuses every document but the trusted ones; it runs after
// APQ, which has put the document of a known hash in the parameters.
type trustedOnly struct{ docs *TrustedDocuments }

var _ interface {
	graphql.OperationParameterMutator
	graphql.HandlerExtension
} = trustedOnly{}

func (trustedOnly) ExtensionName() string                   { return "TrustedDocuments" }
func (trustedOnly) Validate(graphql.ExecutableSchema) error { return nil }

func (t trustedOnly) MutateOperationParameters(_ context.Context, p *graphql.RawParams) *gqlerror.Error {
	if _, ok := t.docs.byHash[documentHash(p.Query)]; ok {
		return nil
	}
	return &gqlerror.Error{
		Message:    "this server runs only its trusted documents, and this is not one of them (docs/backoffice.md)",
		Extensions: map[string]any{"code": codeNotTrusted},
	}
}
