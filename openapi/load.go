package openapi

import (
	"context"
	"embed"
	"fmt"
	"net/url"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

//go:embed v1.yaml pos.yaml v2.yaml
var files embed.FS

// Document is one of the served OpenAPI documents.
type Document struct {
	// Name is the file name without extension: v1, pos or v2.
	Name string
	// Title is a short label for links.
	Title string
	// YAML is the document as written.
	YAML []byte
}

// Documents returns the documents in the order the reference page shows
// them.
func Documents() []Document {
	return []Document{
		{Name: "v1", Title: "/v1 and /points (OAuth 2.0)", YAML: mustRead("v1.yaml")},
		{Name: "pos", Title: "Point of sale (HTTP Basic)", YAML: mustRead("pos.yaml")},
		{Name: "v2", Title: "/v2 beta: predictive segments (OAuth 2.0)", YAML: mustRead("v2.yaml")},
	}
}

func mustRead(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return b
}

// Load parses and validates a document: its structure, its references and
// every example against its schema.
func Load(d Document) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	loader.IncludeOrigin = true
	doc, err := loader.LoadFromDataWithPath(d.YAML, &url.URL{Path: d.Name + ".yaml"})
	if err != nil {
		return nil, fmt.Errorf("openapi: loading %s.yaml: %w", d.Name, err)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("openapi: %s.yaml is invalid: %w", d.Name, err)
	}
	return doc, nil
}

var (
	loadOnce sync.Once
	loaded   map[string]*openapi3.T
	loadErr  error
)

// Loaded returns the documents parsed once per process, by name.
func Loaded() (map[string]*openapi3.T, error) {
	loadOnce.Do(func() {
		loaded = map[string]*openapi3.T{}
		for _, d := range Documents() {
			doc, err := Load(d)
			if err != nil {
				loadErr = err
				return
			}
			loaded[d.Name] = doc
		}
	})
	return loaded, loadErr
}
