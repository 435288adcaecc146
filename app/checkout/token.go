package checkout

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"maps"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/ent/schema/sealed"
	"github.com/fideliza/fideliza/viewer"
)

// validationToken is what validate promised, carried by its token: the
// cart (its items' benefits are recomputed from it at redeem), the eligible
// campaigns, those the stacking rules excluded, and where and for whom. The
// token is signed (HMAC-SHA-256 under a key of the tenant's, derived from
// the data key file), so a client can neither alter it nor take it to
// another tenant; validate writes nothing, and redeem writes the token's
// row (validation_tokens), which binds it to one order.
type validationToken struct {
	ID               string // val_…
	CustomerID       string
	Channel, StoreID string
	CouponID         string // the coupon whose code came with the cart; "" without one
	ExpiresAt        time.Time
	PointsPerReal    decimal.Decimal
	Cart             eligibility.Cart
	Campaigns        []string          // the eligible campaigns
	Excluded         map[string]string // campaign → the campaign the stacking rules applied instead
}

// tokenPrefix starts every validation token (openapi: ^vtk_[A-Za-z0-9_-]+$).
const tokenPrefix = "vtk_"

// tokenVersion is the first byte of a token's payload: a change of the
// layout takes the next, and tokens of another are refused.
const tokenVersion = 1

// macSize is the length of a token's signature.
const macSize = sha256.Size

// errNotToken is the answer to a token that is not one of the tenant's
// (unknown, altered, or another tenant's), as when tokens were stored.
var errNotToken = apperr.Invalid("validation_token", "is not a validation token of this tenant")

// tokenKey is the key that signs the tenant's validation tokens.
func tokenKey(ctx context.Context) ([]byte, error) {
	v, _ := viewer.FromContext(ctx)
	return sealed.Derive("validation-token/" + v.TenantID)
}

// seal is the token that carries t, signed under the tenant's key.
func (t *validationToken) seal(ctx context.Context) (string, error) {
	key, err := tokenKey(ctx)
	if err != nil {
		return "", err
	}
	return t.sealWith(key), nil
}

// sealWith is seal under key: the payload, then its HMAC-SHA-256, in
// unpadded base64url after tokenPrefix.
func (t *validationToken) sealWith(key []byte) string {
	payload := t.encode()
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(m.Sum(payload))
}

// openToken is the validation token s carries, when its signature is the
// tenant's (compared in constant time); errNotToken otherwise. Expiry is the
// caller's to check.
func openToken(ctx context.Context, s string) (*validationToken, error) {
	key, err := tokenKey(ctx)
	if err != nil {
		return nil, err
	}
	return parseToken(key, s)
}

// parseToken is openToken under key.
func parseToken(key []byte, s string) (*validationToken, error) {
	body, ok := strings.CutPrefix(s, tokenPrefix)
	if !ok {
		return nil, errNotToken
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(raw) <= macSize {
		return nil, errNotToken
	}
	payload, sum := raw[:len(raw)-macSize], raw[len(raw)-macSize:]
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	if !hmac.Equal(m.Sum(nil), sum) {
		return nil, errNotToken
	}
	t, err := decodeToken(payload)
	if err != nil {
		return nil, errNotToken
	}
	return t, nil
}

// encode is t's payload: the version, then each field in order; strings and
// counts as uvarints before their bytes, ids of their kind as 16 bytes,
// decimals as exponent and coefficient, the expiry in Unix nanoseconds.
func (t *validationToken) encode() []byte {
	w := tokenWriter{buf: make([]byte, 0, 64+len(t.Cart.Items)*32+len(t.Campaigns)*17)}
	w.buf = append(w.buf, tokenVersion)
	w.id(pid.Validation, t.ID)
	w.id(pid.Customer, t.CustomerID)
	w.str(t.Channel)
	w.str(t.StoreID)
	w.id(pid.Coupon, t.CouponID)
	w.buf = binary.AppendVarint(w.buf, t.ExpiresAt.UnixNano())
	w.dec(t.PointsPerReal)
	w.dec(t.Cart.Subtotal)
	w.count(len(t.Cart.Items))
	for _, it := range t.Cart.Items {
		w.str(it.SKU)
		w.str(it.GTIN)
		w.str(it.Category)
		w.str(it.Brand)
		w.dec(it.Quantity)
		w.dec(it.UnitPrice)
	}
	w.count(len(t.Campaigns))
	for _, id := range t.Campaigns {
		w.id(pid.Campaign, id)
	}
	w.count(len(t.Excluded))
	for _, id := range slices.Sorted(maps.Keys(t.Excluded)) {
		w.id(pid.Campaign, id)
		w.id(pid.Campaign, t.Excluded[id])
	}
	return w.buf
}

// decodeToken reads a payload encode wrote.
func decodeToken(payload []byte) (*validationToken, error) {
	r := tokenReader{buf: payload}
	if r.byte() != tokenVersion {
		return nil, errors.New("validation token: unknown version")
	}
	t := &validationToken{
		ID: r.id(pid.Validation), CustomerID: r.id(pid.Customer),
		Channel: r.str(), StoreID: r.str(), CouponID: r.id(pid.Coupon),
	}
	t.ExpiresAt = time.Unix(0, r.varint()).UTC()
	t.PointsPerReal = r.dec()
	t.Cart.Subtotal = r.dec()
	if n := r.count(); n > 0 {
		t.Cart.Items = make([]eligibility.Item, n)
		for i := range t.Cart.Items {
			it := &t.Cart.Items[i]
			it.SKU, it.GTIN, it.Category, it.Brand = r.str(), r.str(), r.str(), r.str()
			it.Quantity, it.UnitPrice = r.dec(), r.dec()
		}
	}
	if n := r.count(); n > 0 {
		t.Campaigns = make([]string, n)
		for i := range t.Campaigns {
			t.Campaigns[i] = r.id(pid.Campaign)
		}
	}
	if n := r.count(); n > 0 {
		t.Excluded = make(map[string]string, n)
		for range n {
			id := r.id(pid.Campaign)
			t.Excluded[id] = r.id(pid.Campaign)
		}
	}
	if r.err == nil && len(r.buf) > 0 {
		r.err = errors.New("validation token: bytes after its last field")
	}
	return t, r.err
}

type tokenWriter struct{ buf []byte }

func (w *tokenWriter) count(n int) { w.buf = binary.AppendUvarint(w.buf, uint64(n)) }

func (w *tokenWriter) str(s string) {
	w.count(len(s))
	w.buf = append(w.buf, s...)
}

// id writes an id of the kind prefix names as 0 and its ULID's 16 bytes,
// any other string as its length plus one and its bytes.
func (w *tokenWriter) id(prefix, id string) {
	if u, ok := ulidOf(prefix, id); ok {
		w.buf = append(append(w.buf, 0), u[:]...)
		return
	}
	w.count(len(id) + 1)
	w.buf = append(w.buf, id...)
}

// ulidOf is the ULID of id when id is prefix's canonical identifier.
func ulidOf(prefix, id string) (ulid.ULID, bool) {
	rest, ok := strings.CutPrefix(id, prefix+"_")
	if !ok || len(rest) != ulid.EncodedSize {
		return ulid.ULID{}, false
	}
	u, err := ulid.ParseStrict(rest)
	if err != nil || strings.ToLower(u.String()) != rest {
		return ulid.ULID{}, false
	}
	return u, true
}

// dec writes d as its exponent (varint) and its coefficient: the length of
// its magnitude's bytes times two, plus one when negative, then the bytes.
func (w *tokenWriter) dec(d decimal.Decimal) {
	w.buf = binary.AppendVarint(w.buf, int64(d.Exponent()))
	c := d.Coefficient()
	mag := c.Bytes()
	n := uint64(len(mag)) << 1
	if c.Sign() < 0 {
		n |= 1
	}
	w.buf = binary.AppendUvarint(w.buf, n)
	w.buf = append(w.buf, mag...)
}

// tokenReader reads a payload; the first problem stops it (later reads
// answer zero values) and stays in err.
type tokenReader struct {
	buf []byte
	err error
}

var errShort = errors.New("validation token: truncated")

func (r *tokenReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.buf = nil
}

func (r *tokenReader) byte() byte {
	if len(r.buf) == 0 {
		r.fail(errShort)
		return 0
	}
	b := r.buf[0]
	r.buf = r.buf[1:]
	return b
}

func (r *tokenReader) uvarint() uint64 { return readVarint(r, binary.Uvarint) }

func (r *tokenReader) varint() int64 { return readVarint(r, binary.Varint) }

// readVarint reads a varint with read (binary.Uvarint or binary.Varint).
func readVarint[T uint64 | int64](r *tokenReader, read func([]byte) (T, int)) T {
	v, n := read(r.buf)
	if n <= 0 {
		r.fail(errShort)
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

// count reads a count of elements: each takes a byte at least, so a count
// beyond the bytes left is refused before anything is allocated for it.
func (r *tokenReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.buf)) {
		r.fail(errShort)
		return 0
	}
	return int(n)
}

func (r *tokenReader) bytes(n uint64) []byte {
	if n > uint64(len(r.buf)) {
		r.fail(errShort)
		return nil
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b
}

func (r *tokenReader) str() string { return string(r.bytes(r.uvarint())) }

func (r *tokenReader) id(prefix string) string {
	n := r.uvarint()
	if n > 0 {
		return string(r.bytes(n - 1))
	}
	b := r.bytes(16)
	if b == nil {
		return ""
	}
	return prefix + "_" + strings.ToLower(ulid.ULID(b).String())
}

func (r *tokenReader) dec() decimal.Decimal {
	exp := r.varint()
	n := r.uvarint()
	mag := r.bytes(n >> 1)
	if exp < math.MinInt32 || exp > math.MaxInt32 {
		r.fail(errors.New("validation token: decimal exponent out of range"))
	}
	if r.err != nil {
		return decimal.Zero
	}
	c := new(big.Int).SetBytes(mag)
	if n&1 == 1 {
		c.Neg(c)
	}
	return decimal.NewFromBigInt(c, int32(exp))
}
