// Package webassets serves the embedded CSS and JavaScript of the service's
// own pages (the playground, the developer panel): each file under a URL
// carrying a hash of its content, so browsers may cache every URL forever
// and a new file is a new URL.
package webassets

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

var contentTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
}

type file struct {
	body        []byte
	contentType string
	version     string // a hash of body
}

// Set is the files of a directory of an embedded file system, held in
// memory: they are read-only and the largest is a few megabytes.
type Set struct {
	files map[string]file
}

// Load reads every file below dir of fsys; names are relative to dir. It
// panics on an unreadable file: the files are embedded in the binary.
func Load(fsys fs.FS, dir string) Set {
	s := Set{files: map[string]file{}}
	err := fs.WalkDir(fsys, dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		s.files[strings.TrimPrefix(name, dir+"/")] = file{body, contentTypes[path.Ext(name)], hex.EncodeToString(sum[:8])}
		return nil
	})
	if err != nil {
		panic(err)
	}
	return s
}

// URL returns the versioned URL of name, served under prefix.
func (s Set) URL(prefix, name string) (string, error) {
	f, ok := s.files[name]
	if !ok {
		return "", fmt.Errorf("no asset %q", name)
	}
	return prefix + "/" + name + "?v=" + f.version, nil
}

// Serve answers the file named name, or 404.
func (s Set) Serve(w http.ResponseWriter, r *http.Request, name string) {
	f, ok := s.files[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.contentType)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	_, _ = w.Write(f.body)
}
