package sealed

import (
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// keyFile is the data key file: JSON, mode 0600. Keys are never removed, for
// values sealed under an old one may remain (a process that had not yet read
// the newest key, an import file of the day).
type keyFile struct {
	// IndexKey keys the blind index. It does not rotate: a new one would
	// change every index at once.
	IndexKey []byte    `json:"index_key"`
	Keys     []fileKey `json:"keys"` // oldest first
	// Current names the key that seals while a newer one is staged: added,
	// so every process can open what it seals, but not sealing until the
	// file with it has reached them all (AddKey with stage). Empty: the
	// newest key seals.
	Current string `json:"current,omitempty"`
}

type fileKey struct {
	ID        string    `json:"id"`
	Secret    []byte    `json:"secret"`
	CreatedAt time.Time `json:"created_at"`
}

var keyIDPattern = regexp.MustCompile(`^k[1-9][0-9]{0,5}$`)

func keyID(s string) bool { return keyIDPattern.MatchString(s) }

// secretBytes is the size of each key: AES-256, and HMAC-SHA-256's block.
const secretBytes = 32

// Create writes a new key file at path, refusing to overwrite one.
func Create(path string) error {
	f := keyFile{IndexKey: randomBytes(), Keys: []fileKey{{ID: "k1", Secret: randomBytes(), CreatedAt: time.Now().UTC()}}}
	return write(path, f, false)
}

// AddKey adds a new key to the file at path and returns its id. It seals
// from then on (in this process at once; in others within a second), or,
// staged, only once Promote makes it the current key: a staged key lets a
// file be copied to every machine before any process seals with it.
func AddKey(path string, staged bool) (string, error) {
	f, err := read(path)
	if err != nil {
		return "", err
	}
	last, _ := strconv.Atoi(f.Keys[len(f.Keys)-1].ID[1:])
	id := "k" + strconv.Itoa(last+1)
	if staged && f.Current == "" {
		f.Current = f.Keys[len(f.Keys)-1].ID
	}
	if !staged {
		f.Current = ""
	}
	f.Keys = append(f.Keys, fileKey{ID: id, Secret: randomBytes(), CreatedAt: time.Now().UTC()})
	return id, rewrite(path, f)
}

// Promote makes the newest key of the file at path seal, when one is
// staged, and says whether one was.
func Promote(path string) (bool, error) {
	f, err := read(path)
	if err != nil || f.Current == "" || f.Current == f.Keys[len(f.Keys)-1].ID {
		return false, err
	}
	f.Current = ""
	return true, rewrite(path, f)
}

// rewrite replaces the file at path with f and, when it is the installed
// file, reloads it.
func rewrite(path string, f keyFile) error {
	if err := write(path, f, true); err != nil {
		return err
	}
	if r := active.Load(); r != nil && sameFile(r.path, path) {
		if _, err := reload(r, true); err != nil {
			return err
		}
	}
	return nil
}

func sameFile(a, b string) bool {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

func randomBytes() []byte {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return b
}

// write stores f at path through a temporary file and a rename, so a reader
// never sees half a file.
func write(path string, f keyFile, replace bool) error {
	if !replace {
		if _, err := os.Stat(path); err == nil {
			return fmt.Errorf("data key file %s already exists", path)
		}
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("data key file %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if !replace {
		// Link fails if path appeared meanwhile: two processes creating the
		// file at once keep the first one's.
		if err := os.Link(tmp.Name(), path); err != nil {
			return fmt.Errorf("data key file %s: %w", path, err)
		}
		return nil
	}
	return os.Rename(tmp.Name(), path)
}

func read(path string) (keyFile, error) {
	var f keyFile
	b, err := os.ReadFile(path)
	if err != nil {
		return f, fileError(path, err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("data key file %s: not a data key file: %w", path, err)
	}
	if len(f.IndexKey) != secretBytes || len(f.Keys) == 0 {
		return f, fmt.Errorf("data key file %s: want an index_key of %d bytes and at least one key", path, secretBytes)
	}
	for _, k := range f.Keys {
		if !keyID(k.ID) || len(k.Secret) != secretBytes {
			return f, fmt.Errorf("data key file %s: key %q: want an id such as k1 and a secret of %d bytes", path, k.ID, secretBytes)
		}
	}
	return f, nil
}

func load(path string) (*ring, error) {
	mod, err := modTime(path)
	if err != nil {
		return nil, err
	}
	f, err := read(path)
	if err != nil {
		return nil, err
	}
	r := &ring{path: path, modTime: mod, index: f.IndexKey, aeads: map[string]cipher.AEAD{}}
	r.macs.New = func() any { return hmac.New(sha256.New, r.index) }
	for _, k := range f.Keys {
		if r.aeads[k.ID], err = newAEAD(k.Secret); err != nil {
			return nil, err
		}
		r.current = k.ID
	}
	if f.Current != "" {
		if _, ok := r.aeads[f.Current]; !ok {
			return nil, fmt.Errorf("data key file %s: current key %q is not in its keys", path, f.Current)
		}
		r.current = f.Current
	}
	return r, nil
}

func modTime(path string) (time.Time, error) {
	info, err := os.Stat(path)
	if err != nil {
		return time.Time{}, fileError(path, err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return time.Time{}, fmt.Errorf("data key file %s: mode %v lets others read it; want 0600", path, info.Mode().Perm())
	}
	return info.ModTime(), nil
}

// fileError is err, an error of the file system about the key file at
// path, naming the file once: "data key file /x: no such file or directory".
func fileError(path string, err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		err = pe.Err
	}
	return fmt.Errorf("data key file %s: %w", path, err)
}

// Exists says whether a key file is at path.
func Exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
