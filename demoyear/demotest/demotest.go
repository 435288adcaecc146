// Package demotest gives a test a database holding the living demo's year,
// copied from a template played once per database, end of the year and
// version of the code (see storagetest.Template) instead of played again by
// every test that needs it.
package demotest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/demoyear"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// URL returns a fresh database of dialect (its own, dropped when the test
// ends) holding the demo tenant's year as app.LoadDemo plays it with the
// clock at end.
func URL(t testing.TB, dialectName string, end time.Time) string {
	t.Helper()
	// One kind for every end: making a year's template drops the other
	// ends' (an earlier day's), so they do not pile up between runs.
	version := codeVersion(t) + end.UTC().Format("20060102t150405")
	return storagetest.Template(t, dialectName, "demo", version, func(t testing.TB, db *storage.DB) {
		a := app.New(&app.Config{DB: db, Clock: func() time.Time { return end }}).WithHistory(demoyear.Play)
		_, err := a.LoadDemo(context.Background())
		require.NoError(t, err)
	})
}

// Open is URL's database, opened (and closed when the test ends).
func Open(t testing.TB, dialectName string, end time.Time) *storage.DB {
	t.Helper()
	return storagetest.OpenURL(t, URL(t, dialectName, end))
}

// Today is the end of the year a test of the real clock copies: today's
// midnight in the demo programme's zone (America/Sao_Paulo), in UTC, so
// that one template serves a day's runs and the year holds every day
// before the programme's today, whatever the hour (UTC's midnight would
// end it on the day before yesterday from 03:00 UTC on).
func Today() time.Time {
	loc, err := points.Zone(demoZone)
	if err != nil {
		panic(err) // the zone database is embedded (time/tzdata)
	}
	y, m, d := time.Now().In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, loc).UTC()
}

// demoZone is the demo programme's time zone, the tenant's default.
const demoZone = "America/Sao_Paulo"

// codeVersion digests the module's code (its Go files but tests, and its
// SQL): the year is what the generator and every operation it calls make
// of the seed, so any change to them may change it.
func codeVersion(t testing.TB) string {
	t.Helper()
	versionOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			versionErr = err
			return
		}
		h := sha256.New()
		versionErr = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".sql") && (!strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go")) {
				return nil
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			io.WriteString(h, strings.TrimPrefix(path, root))
			_, err = io.Copy(h, f)
			return err
		})
		version = hex.EncodeToString(h.Sum(nil))[:16]
	})
	require.NoError(t, versionErr, "the code's version")
	return version
}

var (
	versionOnce sync.Once
	version     string
	versionErr  error
)

// moduleRoot is the directory of the go.mod above the test's directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fs.ErrNotExist
		}
		dir = parent
	}
}
