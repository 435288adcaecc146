package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/oklog/ulid/v2"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/ent/signingkey"
	"github.com/fideliza/fideliza/viewer"
)

// signingAlg is the only algorithm tokens are signed and accepted with.
const signingAlg = jose.ES256

// keyCacheTTL bounds how long a process works from its cached key set; a key
// rotated by another process is picked up within it (and at once when a token
// names an unknown kid).
const keyCacheTTL = time.Minute

// JWKSMaxAge is how long verifiers may cache the published key set (the
// JWKS's Cache-Control max-age). PublishLead is how long a new key is
// published before it signs: one cache lifetime, and this process's own
// key cache, so that a verifier that never refetches on an unknown kid has
// the key before any token names it.
const (
	JWKSMaxAge  = 5 * time.Minute
	PublishLead = JWKSMaxAge + keyCacheTTL
)

// Keys are the signing keys in the database, cached in memory.
type Keys struct {
	client *ent.Client
	// Clock is the time keys are created, published and chosen by; nil
	// is the system clock (tests set it).
	Clock func() time.Time

	reloadMu sync.Mutex // serialises the reloads unknown kids cause

	mu     sync.Mutex
	loaded time.Time
	keys   []storedKey // newest first
	public []jose.JSONWebKey
}

// storedKey is a key as loaded: its private part and when it was created
// and retired.
type storedKey struct {
	private          jose.JSONWebKey
	created, retired time.Time // retired zero: not retired
}

func (k *Keys) now() time.Time {
	if k.Clock != nil {
		return k.Clock()
	}
	return time.Now()
}

// NewKeys returns the key set stored through client.
func NewKeys(client *ent.Client) *Keys { return &Keys{client: client} }

// Rotate adds a new key, published at once, which signs once it has been
// published for PublishLead; the current key signs until then and stays
// published until every token it signed has expired.
func (k *Keys) Rotate(ctx context.Context) (string, error) {
	ctx = viewer.SystemContext(ctx)
	tx, err := k.client.Tx(ctx)
	if err != nil {
		return "", err
	}
	now := k.now().UTC()
	err = tx.SigningKey.Update().Where(signingkey.RetiredAtIsNil()).SetRetiredAt(now.Add(PublishLead)).Exec(ctx)
	if err != nil {
		return "", errors.Join(err, tx.Rollback())
	}
	created, err := k.createKey(ctx, tx.Client())
	if err != nil {
		return "", errors.Join(err, tx.Rollback())
	}
	if err := tx.Commit(); err != nil {
		return "", err
	}
	k.invalidate()
	return created.ID, nil
}

func (k *Keys) createKey(ctx context.Context, c *ent.Client) (*ent.SigningKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	return c.SigningKey.Create().SetAlgorithm(string(signingAlg)).SetPrivateKey(der).SetCreatedAt(k.now().UTC()).Save(ctx)
}

func (k *Keys) invalidate() {
	k.mu.Lock()
	k.loaded = time.Time{}
	k.mu.Unlock()
}

// CreateFirst creates a signing key through c when no key is live (a new
// database), so that the key set verifiers fetch holds it before the first
// token is issued. Given a transaction that serialises its callers
// (storage's Exclusive), processes starting together make one key.
func (k *Keys) CreateFirst(ctx context.Context, c *ent.Client) error {
	ctx = viewer.SystemContext(ctx)
	live, err := c.SigningKey.Query().
		Where(signingkey.Or(signingkey.RetiredAtIsNil(), signingkey.RetiredAtGT(k.now().UTC()))).Exist(ctx)
	if err != nil || live {
		return err
	}
	_, err = k.createKey(ctx, c)
	return err
}

// Signing returns the key new tokens are signed with: the newest key
// published for PublishLead and not retired, or, when none is (a new
// database), the oldest not retired. Bring-up makes the first key
// (app.BringUp); a database never brought up (a test's) gets it here.
func (k *Keys) Signing(ctx context.Context) (jose.JSONWebKey, error) {
	if err := k.refresh(ctx, false); err != nil {
		return jose.JSONWebKey{}, err
	}
	if key, ok := k.signing(); ok {
		return key, nil
	}
	if err := k.CreateFirst(ctx, k.client); err != nil {
		return jose.JSONWebKey{}, err
	}
	k.invalidate()
	if err := k.refresh(ctx, false); err != nil {
		return jose.JSONWebKey{}, err
	}
	if key, ok := k.signing(); ok {
		return key, nil
	}
	return jose.JSONWebKey{}, errors.New("no signing key")
}

func (k *Keys) signing() (jose.JSONWebKey, bool) {
	now := k.now()
	k.mu.Lock()
	defer k.mu.Unlock()
	var fallback *storedKey
	for i := range k.keys {
		key := &k.keys[i]
		if !key.retired.IsZero() && !key.retired.After(now) {
			continue
		}
		if !key.created.After(now.Add(-PublishLead)) {
			return key.private, true
		}
		fallback = key // the oldest not retired, in the end
	}
	if fallback != nil {
		// No key has been published for PublishLead (a new database, or
		// a rotation soon after it): the one published longest signs.
		return fallback.private, true
	}
	return jose.JSONWebKey{}, false
}

// Public returns the published public keys: the signing key and the retired
// keys whose tokens may still be alive.
func (k *Keys) Public(ctx context.Context) (jose.JSONWebKeySet, error) {
	if err := k.refresh(ctx, false); err != nil {
		return jose.JSONWebKeySet{}, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	// Never nil: a JWK Set's keys are an array, [] before the first key.
	return jose.JSONWebKeySet{Keys: append([]jose.JSONWebKey{}, k.public...)}, nil
}

// minReloadInterval bounds the reloads that unknown kids cause: at most one a
// second, however many tokens name keys we do not know.
const minReloadInterval = time.Second

// lookup returns the public key of kid. An unknown kid shaped like ours may
// name a key another process created since our last load: the keys are
// reloaded once, and a request that comes within minReloadInterval of the
// last load waits for the next one rather than being refused.
func (k *Keys) lookup(ctx context.Context, kid string) (jose.JSONWebKey, bool, error) {
	if err := k.refresh(ctx, false); err != nil {
		return jose.JSONWebKey{}, false, err
	}
	if key, ok := k.find(kid); ok || !plausibleKeyID(kid) {
		return key, ok, nil
	}
	arrived := time.Now()
	k.reloadMu.Lock()
	defer k.reloadMu.Unlock()
	k.mu.Lock()
	loaded := k.loaded
	k.mu.Unlock()
	if loaded.After(arrived) {
		// A reload began after this request arrived, while it queued:
		// that reload's answer stands, so a flood of unknown kids costs
		// one query a second and no growing queue.
		key, ok := k.find(kid)
		return key, ok, nil
	}
	if wait := minReloadInterval - time.Since(loaded); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return jose.JSONWebKey{}, false, ctx.Err()
		}
	}
	// Another request may have reloaded while we waited; that reload began
	// after this request arrived, so it saw every key this token can name.
	if key, ok := k.find(kid); ok {
		return key, true, nil
	}
	if err := k.refresh(ctx, true); err != nil {
		return jose.JSONWebKey{}, false, err
	}
	key, ok := k.find(kid)
	return key, ok, nil
}

func (k *Keys) find(kid string) (jose.JSONWebKey, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, key := range k.public {
		if key.KeyID == kid {
			return key, true
		}
	}
	return jose.JSONWebKey{}, false
}

// plausibleKeyID reports whether kid has the shape of our key ids
// ("key_" and a ULID), so that made-up kids cause no database reads.
func plausibleKeyID(kid string) bool {
	p, body, ok := strings.Cut(kid, "_")
	if !ok || p != pid.SigningKey {
		return false
	}
	_, err := ulid.ParseStrict(strings.ToUpper(body))
	return err == nil
}

// refresh reloads the keys when the cache is older than keyCacheTTL, or with
// force when it is at least minReloadInterval old.
func (k *Keys) refresh(ctx context.Context, force bool) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	age := time.Since(k.loaded)
	if age < keyCacheTTL && (!force || age < minReloadInterval) {
		return nil
	}
	started := time.Now()
	publishedSince := k.now().Add(-LongestTokenLifetime - time.Minute)
	rows, err := k.client.SigningKey.Query().
		Where(signingkey.Or(signingkey.RetiredAtIsNil(), signingkey.RetiredAtGT(publishedSince))).
		Order(ent.Desc(signingkey.FieldCreatedAt), ent.Desc(signingkey.FieldID)).
		All(viewer.SystemContext(ctx))
	if err != nil {
		return fmt.Errorf("loading signing keys: %w", err)
	}
	var (
		keys   []storedKey
		public []jose.JSONWebKey
	)
	for _, r := range rows {
		parsed, err := x509.ParsePKCS8PrivateKey(r.PrivateKey)
		if err != nil {
			return fmt.Errorf("signing key %s: %w", r.ID, err)
		}
		priv, ok := parsed.(*ecdsa.PrivateKey)
		if !ok {
			return fmt.Errorf("signing key %s: not an ECDSA key", r.ID)
		}
		key := storedKey{private: jose.JSONWebKey{Key: priv, KeyID: r.ID, Algorithm: r.Algorithm, Use: "sig"}, created: r.CreatedAt}
		if r.RetiredAt != nil {
			key.retired = *r.RetiredAt
		}
		keys = append(keys, key)
		public = append(public, jose.JSONWebKey{Key: &priv.PublicKey, KeyID: r.ID, Algorithm: r.Algorithm, Use: "sig"})
	}
	// The load counts from when its query began: a key committed after that
	// may be missing from it.
	k.keys, k.public, k.loaded = keys, public, started
	return nil
}

// VerifySignature implements go-oidc's KeySet: it checks the JWS against the
// published key its header names.
func (k *Keys) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(raw, []jose.SignatureAlgorithm{signingAlg})
	if err != nil {
		return nil, fmt.Errorf("malformed token: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("token must carry one signature")
	}
	h := jws.Signatures[0].Protected
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != AccessTokenType {
		return nil, fmt.Errorf("token type %q, want %q", typ, AccessTokenType)
	}
	key, ok, err := k.lookup(ctx, h.KeyID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("unknown signing key %q", h.KeyID)
	}
	return jws.Verify(key)
}
