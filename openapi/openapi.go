// Package openapi holds the OpenAPI 3.1 documents of the REST interfaces
// integrators call (v1.yaml: /v1, /points and /auth/token; pos.yaml: the
// tenant point-of-sale paths) and serves them, as YAML and JSON, with a
// reference page rendered from them on the server: plain HTML and CSS, no
// script and nothing loaded from elsewhere, so it works offline.
//
// The documents are the contract the tests hold the handlers to: package
// openapitest validates every response of the rest tests against them.
package openapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/oasdiff/yaml"

	"github.com/fideliza/fideliza/secheaders"
)

// served is a file of the handler, rendered once.
type served struct {
	body        []byte
	contentType string
	etag        string
}

func newServed(body []byte, contentType string) served {
	sum := sha256.Sum256(body)
	return served{body: body, contentType: contentType, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
}

var (
	filesOnce sync.Once
	files_    map[string]served
	filesErr  error
)

// renderFiles renders the page and converts the documents to JSON, once.
func renderFiles() (map[string]served, error) {
	filesOnce.Do(func() {
		m := map[string]served{}
		for _, d := range Documents() {
			j, err := yaml.YAMLToJSON(d.YAML)
			if err != nil {
				filesErr = fmt.Errorf("openapi: %s.yaml to JSON: %w", d.Name, err)
				return
			}
			m[d.Name+".yaml"] = newServed(d.YAML, "application/yaml; charset=utf-8")
			m[d.Name+".json"] = newServed(j, "application/json")
		}
		page, err := renderPage()
		if err != nil {
			filesErr = err
			return
		}
		m[""] = newServed(page, "text/html; charset=utf-8")
		files_ = m
	})
	return files_, filesErr
}

// Handler serves, mounted at /openapi, the reference page at / and the
// documents at /v1.yaml, /v1.json, /pos.yaml and /pos.json.
func Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.GetHead, secheaders.Policy{CSP: csp}.Middleware)
	serve := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			files, err := renderFiles()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			f := files[name]
			w.Header().Set("Content-Type", f.contentType)
			w.Header().Set("ETag", f.etag)
			w.Header().Set("Cache-Control", "no-cache")
			if name != "" {
				// Tools such as Swagger UI or Redocly may read the documents
				// from another origin.
				w.Header().Set("Access-Control-Allow-Origin", "*")
			}
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
		}
	}
	r.Get("/", serve(""))
	for _, d := range Documents() {
		r.Get("/"+d.Name+".yaml", serve(d.Name+".yaml"))
		r.Get("/"+d.Name+".json", serve(d.Name+".json"))
	}
	return r
}

// csp allows the page nothing but its own inline style sheet, by hash.
var csp = func() string {
	sum := sha256.Sum256([]byte(styleSheet))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
}()
