package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent/schema/sealed"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// tokenIssuer is the --public-url of the servers of these tests: the
// issuer of their tokens, the same across restarts.
const tokenIssuer = "http://127.0.0.1:8080"

// TestSigningKeysSealed is the backup attack of issue 32: the database must
// hold no private signing key a forger could sign an administrator's token
// with. With a token issued over HTTP (the first key) and a rotation (a
// second), no part of either private key is in the SQLite file and its WAL,
// or in a pg_dump; after a rotation of the data key, both are sealed under
// the new data key and open in a new process, which signs a token the server
// accepts beside the one issued before.
func TestSigningKeysSealed(t *testing.T) {
	t.Parallel()
	if !inOwnProcess(t) { // it rotates the data key
		return
	}
	withCLITenant(t, "Mercado", func(t *testing.T, u, tenantID string, logs *syncBuffer) {
		client := fideliza(t, logs, u, "client", "create", "--tenant", tenantID, "--kind", "oauth", "--scopes", "customers:read")
		base, _ := startServe(t, logs, u, "--public-url", tokenIssuer)
		before := clientToken(t, base, client["client_id"].(string), client["client_secret"].(string))
		fideliza(t, logs, u, "keys", "rotate")
		found, keys := signingKeyMaterial(t, u)
		require.Equal(t, 2, keys)
		require.Empty(t, found, "private signing keys in the database")

		rotated := fideliza(t, logs, u, "keys", "rotate-data")
		requireSigningKeysSealedUnder(t, u, rotated["key_id"].(string))
		found, _ = signingKeyMaterial(t, u)
		require.Empty(t, found, "private signing keys in the database after rotate-data")
		after := fideliza(t, logs, u, "--public-url", tokenIssuer, "user", "token", "--tenant", tenantID)["access_token"].(string)
		for _, token := range []string{before, after} {
			requireTokenAccepted(t, base, token)
		}
	})
}

// TestSigningKeysInClearSealedByMigration: a database from before signing
// keys were sealed, its keys in clear, has them sealed by the migration, and
// the tokens they signed before still verify.
func TestSigningKeysInClearSealedByMigration(t *testing.T) {
	t.Parallel()
	withCLITenant(t, "Mercado", func(t *testing.T, u, tenantID string, logs *syncBuffer) {
		before := fideliza(t, logs, u, "--public-url", tokenIssuer, "user", "token", "--tenant", tenantID)["access_token"].(string)
		fideliza(t, logs, u, "keys", "rotate")
		unsealSigningKeys(t, u)
		found, keys := signingKeyMaterial(t, u)
		require.Equal(t, 2, keys)
		require.Len(t, found, 2, "the scan finds keys in clear")

		t.Run("upgraded", func(t *testing.T) {
			base, _ := startServe(t, logs, u, "--public-url", tokenIssuer)
			requireTokenAccepted(t, base, before)
		})
		key, err := sealed.CurrentKeyID()
		require.NoError(t, err)
		requireSigningKeysSealedUnder(t, u, key)
		found, _ = signingKeyMaterial(t, u)
		require.Empty(t, found, "private signing keys in the database after the migration")
		require.Contains(t, logs.String(), "sealed the signing keys stored in clear")
	})
}

// unsealSigningKeys makes the database at dbURL one from before signing keys
// were sealed: its keys in clear, and the migration that seals them not yet
// applied.
func unsealSigningKeys(t *testing.T, dbURL string) {
	t.Helper()
	ctx := viewer.SystemContext(context.Background())
	db, err := storage.Open(ctx, dbURL)
	require.NoError(t, err)
	defer db.Close()
	keys, err := db.Ent.SigningKey.Query().All(ctx)
	require.NoError(t, err)
	for _, k := range keys {
		_, err := db.SQL.ExecContext(ctx, `UPDATE signing_keys SET private_key = $1 WHERE id = $2`, k.PrivateKey, k.ID)
		require.NoError(t, err)
	}
	all, err := storage.Migrations(db.Dialect)
	require.NoError(t, err)
	i := slices.IndexFunc(all, func(m storage.Migration) bool { return m.Name == "sealed_signing_keys" })
	require.GreaterOrEqual(t, i, 0)
	_, err = db.SQL.ExecContext(ctx, `DELETE FROM fideliza_migrations WHERE version >= $1`, all[i].Version)
	require.NoError(t, err)
	// The migrations after it run again: what one added that SQLite cannot
	// add only if missing goes back too, and what one dropped that SQLite
	// cannot drop only if present comes back. 0045's index and triggers
	// read a column 0035 adds, and 0027's rebuild would run them: they go
	// first.
	on := func(table string) string {
		if db.Dialect == dialect.Postgres {
			return " ON " + table
		}
		return ""
	}
	for _, added := range []string{
		`DROP INDEX IF EXISTS campaigns_holdout_period`,
		`DROP TRIGGER IF EXISTS campaign_customers_campaign_insert` + on("campaigns"),
		`DROP TRIGGER IF EXISTS campaign_customers_campaign_update` + on("campaigns"),
		`DROP TRIGGER IF EXISTS campaign_customers_campaign_delete` + on("campaigns"),
		`DROP TRIGGER IF EXISTS campaign_customers_sale_insert` + on("sales"),
		`DROP TRIGGER IF EXISTS campaign_customers_sale_update` + on("sales"),
		`DROP TRIGGER IF EXISTS campaign_customers_sale_delete` + on("sales"),
		`DROP TRIGGER IF EXISTS rollup_rebuild_campaign_customers` + on("rollup_rebuilds"),
		`ALTER TABLE tenants DROP COLUMN cors_origins`, // 0028
		`ALTER TABLE events DROP COLUMN trace_parent`,  // 0032
		`ALTER TABLE tenants DROP COLUMN points_value`, // 0033
		`ALTER TABLE tenants DROP COLUMN points_spend_min`,
		`ALTER TABLE tenants DROP COLUMN points_spend_max_share`,
		`ALTER TABLE tenants DROP COLUMN points_spend_channels`,
		`ALTER TABLE sale_payments DROP COLUMN hold_id`,
		`ALTER TABLE segments DROP COLUMN rule`,                         // 0034
		`ALTER TABLE campaigns DROP COLUMN holdout_basis_points`,        // 0035
		`ALTER TABLE audit_events DROP COLUMN changes`,                  // 0039
		`ALTER TABLE tenants DROP COLUMN points_spend_max_share_silver`, // 0040
		`ALTER TABLE tenants DROP COLUMN points_spend_max_share_gold`,
		`ALTER TABLE tenants DROP COLUMN points_spend_max_share_diamond`,
		`DROP INDEX IF EXISTS customer_tenant_id_lifetime_value_cents_id`, // 0047
		`ALTER TABLE customers DROP COLUMN lifetime_value_cents`,
		`DROP INDEX IF EXISTS customer_tenant_id_sales_count_id`, // 0048
		`DROP INDEX IF EXISTS customer_tenant_id_last_purchase_unix_id`,
		`ALTER TABLE customers DROP COLUMN sales_count`,
		`ALTER TABLE customers DROP COLUMN last_purchase_at`,
		`ALTER TABLE customers DROP COLUMN last_purchase_unix`,
		`DROP TABLE IF EXISTS wallet_lots`, // 0051
		`DROP TABLE IF EXISTS wallet_entries`,
		`DROP TABLE IF EXISTS wallets`,
		`ALTER TABLE tenants DROP COLUMN cashback_as_points`,
		`DROP TABLE IF EXISTS wallet_holds`, // 0052
		`ALTER TABLE tenants DROP COLUMN cashback_spend_channels`,
		`ALTER TABLE tenants DROP COLUMN cashback_spend_max_share`,
		`ALTER TABLE tenants DROP COLUMN cashback_spend_min`,
		`DROP TABLE IF EXISTS gift_card_entries`, // 0053
		`DROP TABLE IF EXISTS gift_cards`,
		`DROP INDEX IF EXISTS saleitem_tenant_id_gift_card_id`, // 0054
		`ALTER TABLE sale_items DROP COLUMN gift_card_id`,
		// what one dropped comes back (0044)
		`ALTER TABLE validation_tokens ADD COLUMN token_hash text NULL`,
		`ALTER TABLE validation_tokens ADD COLUMN cart text NULL`,
		`ALTER TABLE validation_tokens ADD COLUMN benefits text NULL`,
		`ALTER TABLE validation_tokens ADD COLUMN campaign_ids text NULL`,
	} {
		_, err = db.SQL.ExecContext(ctx, added)
		require.NoError(t, err)
	}
}

// requireSigningKeysSealedUnder checks every signing key of the database at
// dbURL is stored sealed under the data key id.
func requireSigningKeysSealedUnder(t *testing.T, dbURL, id string) {
	t.Helper()
	db, err := storage.Open(context.Background(), dbURL)
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.SQL.Query(`SELECT private_key FROM signing_keys`)
	require.NoError(t, err)
	defer rows.Close()
	n := 0
	for rows.Next() {
		var stored []byte
		require.NoError(t, rows.Scan(&stored))
		require.True(t, bytes.HasPrefix(stored, []byte(id+":")), "a signing key is not sealed under %s", id)
		n++
	}
	require.NoError(t, rows.Err())
	require.Positive(t, n)
}

// signingKeyMaterial opens the signing keys of the database at dbURL
// through ent and returns the ids of those whose private part the database
// holds in clear, in any form keyNeedles knows, and how many keys it has.
func signingKeyMaterial(t *testing.T, dbURL string) (found []string, keys int) {
	t.Helper()
	ctx := viewer.SystemContext(context.Background())
	db, err := storage.Open(ctx, dbURL)
	require.NoError(t, err)
	stored, err := db.Ent.SigningKey.Query().All(ctx)
	require.NoError(t, err)
	dialectName := db.Dialect
	require.NoError(t, db.Close())
	privates := map[string][]byte{}
	for _, k := range stored {
		privates[k.ID] = privateScalar(t, k.PrivateKey)
	}
	raw := storedBytes(t, dialectName, dbURL, "hex")
	return keysIn(raw, privates), len(stored)
}

// privateScalar is the private scalar d of a PKCS #8 DER ECDSA key.
func privateScalar(t *testing.T, der []byte) []byte {
	t.Helper()
	parsed, err := x509.ParsePKCS8PrivateKey(der)
	require.NoError(t, err)
	d, err := parsed.(*ecdsa.PrivateKey).Bytes()
	require.NoError(t, err)
	return d
}

// keysIn returns the ids of the keys of privates (id → private scalar d)
// whose material raw holds, sorted.
func keysIn(raw []byte, privates map[string][]byte) []string {
	var found []string
	for id, d := range privates {
		for _, needle := range keyNeedles(d) {
			if bytes.Contains(raw, needle) {
				found = append(found, id)
				break
			}
		}
	}
	slices.Sort(found)
	return found
}

// keyNeedles are the forms part of an EC private scalar d takes in what
// stores the key: the PKCS #8 DER, a PEM of it and a JWK's "d" all carry d.
// Each quarter of d (8 bytes: no match by chance), raw, in hex and in base64
// (standard and URL alphabets, at each of the three offsets a longer encoded
// value may put it at; a PEM's line breaks split at most one quarter).
func keyNeedles(d []byte) [][]byte {
	var out [][]byte
	for i := 0; i+8 <= len(d); i += 8 {
		q := d[i : i+8]
		out = append(out, q, []byte(hex.EncodeToString(q)), []byte(strings.ToUpper(hex.EncodeToString(q))))
		for offset := range 3 {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
				s := enc.EncodeToString(append(make([]byte, offset), q...))
				// The characters whose six bits all come from q.
				out = append(out, []byte(s[(8*offset+5)/6:8*(offset+len(q))/6]))
			}
		}
	}
	return out
}

func TestKeysIn(t *testing.T) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	require.NoError(t, err)
	d, err := priv.Bytes()
	require.NoError(t, err)
	jwk, err := json.Marshal(jose.JSONWebKey{Key: priv, KeyID: "k", Algorithm: "ES256"})
	require.NoError(t, err)
	public, err := json.Marshal(jose.JSONWebKey{Key: &priv.PublicKey, KeyID: "k", Algorithm: "ES256"})
	require.NoError(t, err)
	sealedDER, err := sealed.SealBytes(der)
	require.NoError(t, err)
	privates := map[string][]byte{"k": d}
	for name, c := range map[string]struct {
		raw  []byte
		want []string
	}{
		"DER":            {append([]byte("\x00page"), der...), []string{"k"}},
		"hex DER":        {[]byte(`\\x` + hex.EncodeToString(der)), []string{"k"}},
		"PEM":            {pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), []string{"k"}},
		"base64 DER":     {[]byte("x" + base64.StdEncoding.EncodeToString(der)), []string{"k"}},
		"JWK":            {jwk, []string{"k"}},
		"a half of d":    {d[16:], []string{"k"}},
		"sealed DER":     {sealedDER, nil},
		"public JWK":     {public, nil},
		"nothing at all": {[]byte("nothing"), nil},
	} {
		require.Equal(t, c.want, keysIn(c.raw, privates), name)
	}
}

// clientToken is an access token of the client, from the token endpoint.
func clientToken(t *testing.T, base, id, secret string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}}
	req, _ := http.NewRequest(http.MethodPost, base+"/auth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	doJSON(t, req, http.StatusOK, &tok)
	return tok.AccessToken
}

// requireTokenAccepted checks the server at base answers a query with token.
func requireTokenAccepted(t *testing.T, base, token string) {
	t.Helper()
	var data struct {
		Customers struct{ TotalCount int } `json:"customers"`
	}
	graphQL(t, base, token, `{ customers(first: 1) { totalCount } }`, nil, &data)
}
