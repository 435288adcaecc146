// Package sealed encrypts the national ids (CPF, CNPJ) the database holds,
// and the private token signing keys.
// A value is sealed with AES-256-GCM under the newest key of the process's
// data key file and carries that key's id ("k2:…"), so keys can rotate while
// older values stay readable; a keyed blind index (HMAC-SHA-256, truncated to
// 128 bits) of the clear value serves exact lookups and unique constraints.
//
// The keyring is one per process, like a TLS certificate: ent's value
// scanners, which get no context, seal and open through it. Commands install
// it before they open the database (storage.Open refuses to go on without
// one), and a running process picks up a key added to its file (rotation) on
// its own.
package sealed

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// separator ends a sealed value's key id; no CPF or CNPJ holds one, so a
// value without it is a clear one written before documents were sealed.
const separator = ':'

// indexBytes is the length of the blind index before encoding.
const indexBytes = 16

// ReloadEvery is how often sealing checks the key file for a newer key.
const ReloadEvery = time.Second

// ring is a loaded key file.
type ring struct {
	path    string
	modTime time.Time
	index   []byte // the blind index's key, fixed for the file's life
	// macs are HMACs keyed with index, reused: a lookup by document (every
	// identify at the till) need not key a new one.
	macs    sync.Pool
	aeads   map[string]cipher.AEAD
	current string // the id new values are sealed with
}

var (
	active    atomic.Pointer[ring]
	checkedAt atomic.Int64 // unix nanoseconds of the last look at the file
	reloadMu  sync.Mutex
)

// ErrNoKey is returned when no keyring is installed.
var ErrNoKey = errors.New("no data key loaded: pass --data-key-file (FIDELIZA_DATA_KEY_FILE)")

// Install makes the key file at path the process's keyring. A process holds
// one index key: installing a file with another one is refused, for the
// values the first one indexed could no longer be found.
func Install(path string) error {
	r, err := load(path)
	if err != nil {
		return err
	}
	reloadMu.Lock()
	defer reloadMu.Unlock()
	if old := active.Load(); old != nil && !hmac.Equal(old.index, r.index) {
		return fmt.Errorf("data key file %s: this process already uses the data key file %s, whose index key differs", path, old.path)
	}
	active.Store(r)
	checkedAt.Store(time.Now().UnixNano())
	return nil
}

// Path is the installed key file's path; "" when none is installed.
func Path() string {
	if r := active.Load(); r != nil {
		return r.path
	}
	return ""
}

// Installed says whether a keyring is installed.
func Installed() bool { return active.Load() != nil }

// CurrentKeyID is the id of the key new values are sealed with.
func CurrentKeyID() (string, error) {
	r, err := fresh()
	if err != nil {
		return "", err
	}
	return r.current, nil
}

// fresh is the installed keyring, reloaded first when its file changed
// since it was last looked at more than ReloadEvery ago.
func fresh() (*ring, error) {
	r := active.Load()
	if r == nil {
		return nil, ErrNoKey
	}
	if now := time.Now().UnixNano(); now-checkedAt.Load() > int64(ReloadEvery) {
		checkedAt.Store(now)
		return reload(r, false)
	}
	return r, nil
}

// reload reads r's file again when it changed (or always, with force) and
// installs the result; on failure r stays in use.
func reload(r *ring, force bool) (*ring, error) {
	reloadMu.Lock()
	defer reloadMu.Unlock()
	if cur := active.Load(); cur != r {
		return cur, nil // another goroutine reloaded it
	}
	mod, err := modTime(r.path)
	if err != nil || (!force && mod.Equal(r.modTime)) {
		return r, nil
	}
	next, err := load(r.path)
	if err != nil || !hmac.Equal(next.index, r.index) {
		return r, nil
	}
	active.Store(next)
	return next, nil
}

// Seal encrypts plain under the current key; "" stays "".
func Seal(plain string) (string, error) {
	if plain == "" {
		return "", nil
	}
	b, err := SealBytes([]byte(plain))
	if err != nil {
		return "", err
	}
	id, box, _ := strings.Cut(string(b), string(separator))
	return id + string(separator) + base64.RawURLEncoding.EncodeToString([]byte(box)), nil
}

// Open decrypts a value Seal made; a value without a key id is a clear one
// from before documents were sealed and is returned as it is.
func Open(value string) (string, error) {
	id, box, ok := strings.Cut(value, string(separator))
	if !ok || !keyID(id) {
		return value, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(box)
	if err != nil {
		return "", fmt.Errorf("sealed value under key %s: %w", id, err)
	}
	plain, err := open(id, raw)
	return string(plain), err
}

// SealBytes encrypts plain under the current key, as "<key id>:<nonce and
// ciphertext>"; nil stays nil.
func SealBytes(plain []byte) ([]byte, error) {
	if plain == nil {
		return nil, nil
	}
	r, err := fresh()
	if err != nil {
		return nil, err
	}
	aead := r.aeads[r.current]
	out := make([]byte, 0, len(r.current)+1+aead.NonceSize()+len(plain)+aead.Overhead())
	out = append(append(out, r.current...), separator)
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out = append(out, nonce...)
	// The key id is the additional data: a value cannot be passed off as
	// sealed under another key.
	return aead.Seal(out, nonce, plain, []byte(r.current)), nil
}

// OpenBytes decrypts a value SealBytes made; a value without a key id is
// returned as it is.
func OpenBytes(value []byte) ([]byte, error) {
	id, box, ok := strings.Cut(string(value), string(separator))
	if !ok || !keyID(id) {
		return value, nil
	}
	return open(id, []byte(box))
}

func open(id string, box []byte) ([]byte, error) {
	r, err := fresh()
	if err != nil {
		return nil, err
	}
	aead, ok := r.aeads[id]
	if !ok {
		// A key another process added (a rotation) that this one has not
		// read yet.
		if r, _ = reload(r, true); r != nil {
			aead, ok = r.aeads[id]
		}
		if !ok {
			return nil, fmt.Errorf("a value is sealed under key %s, which the data key file %s does not hold", id, r.path)
		}
	}
	if len(box) < aead.NonceSize() {
		return nil, fmt.Errorf("sealed value under key %s is too short", id)
	}
	plain, err := aead.Open(nil, box[:aead.NonceSize()], box[aead.NonceSize():], []byte(id))
	if err != nil {
		return nil, fmt.Errorf("sealed value under key %s does not open: %w", id, err)
	}
	return plain, nil
}

// SealedUnder says whether value is sealed under key id.
func SealedUnder(value, id string) bool {
	return strings.HasPrefix(value, id+string(separator))
}

// Index is the blind index of plain: equal for equal values, and telling
// nothing of the value without the key.
func Index(plain string) (string, error) {
	r := active.Load()
	if r == nil {
		return "", ErrNoKey
	}
	m := r.macs.Get().(hash.Hash)
	defer r.macs.Put(m)
	m.Reset()
	m.Write([]byte(plain))
	var sum [sha256.Size]byte
	return base64.RawURLEncoding.EncodeToString(m.Sum(sum[:0])[:indexBytes]), nil
}

// Derive is a key of its own for purpose (a use and what it is scoped to,
// such as "validation-token/<tenant>"): HMAC-SHA-256 of purpose under the
// index key, which does not rotate, so every process of a database derives
// the same key and a rotation does not change it. The leading NUL keeps a
// derived key apart from every blind index (no document holds one).
func Derive(purpose string) ([]byte, error) {
	r := active.Load()
	if r == nil {
		return nil, ErrNoKey
	}
	m := hmac.New(sha256.New, r.index)
	m.Write([]byte{0})
	m.Write([]byte(purpose))
	return m.Sum(nil), nil
}

// MustIndex is Index for callers behind storage.Open, which refuses to open
// a database without a keyring.
func MustIndex(plain string) string {
	idx, err := Index(plain)
	if err != nil {
		panic(err)
	}
	return idx
}

func newAEAD(secret []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(secret)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
