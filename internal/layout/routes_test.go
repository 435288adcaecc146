package layout

import (
	"go/ast"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// routeWords is an HTTP method followed by a path: how a transport names
// what it serves.
var routeWords = regexp.MustCompile(`\b(GET|POST|PUT|PATCH|DELETE) (/|…)`)

// TestApplicationNotDescribedByRoutes: the application (app, domain)
// describes its types and functions by what they are, not by the route
// that happens to serve them today; the routes belong to rest/ and the
// OpenAPI documents.
func TestApplicationNotDescribedByRoutes(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	var found []string
	for _, dir := range []string{"app", "domain"} {
		for _, f := range handWrittenFiles(t, filepath.Join(root, dir)) {
			if strings.HasSuffix(f.path, "_test.go") {
				continue
			}
			for _, doc := range docComments(f.ast) {
				if routeWords.MatchString(doc.Text()) {
					found = append(found, dir+"/"+f.path+": "+strings.SplitN(doc.Text(), "\n", 2)[0])
				}
			}
		}
	}
	require.Empty(t, found, "application docs that name a route")
}

// docComments are a file's package, type, function and declaration docs.
func docComments(f *ast.File) []*ast.CommentGroup {
	docs := []*ast.CommentGroup{f.Doc}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			docs = append(docs, d.Doc)
		case *ast.GenDecl:
			docs = append(docs, d.Doc)
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					docs = append(docs, ts.Doc)
				}
			}
		}
	}
	out := docs[:0]
	for _, d := range docs {
		if d != nil {
			out = append(out, d)
		}
	}
	return out
}
