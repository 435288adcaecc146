// Package webhook signs, checks and sends webhook deliveries: the Standard
// Webhooks scheme (webhook-id, webhook-timestamp and webhook-signature
// headers, HMAC-SHA256 over "id.timestamp.body" with a whsec_ secret), the
// envelope every event travels in, and an HTTP client that refuses to reach
// the service's own network.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// SecretPrefix starts every signing secret; the rest is base64 of 32 random
// bytes, the HMAC key.
const SecretPrefix = "whsec_"

// Headers of a delivery, as Standard Webhooks names them.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// NewSecret returns a new signing secret.
func NewSecret() string {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return SecretPrefix + base64.StdEncoding.EncodeToString(key)
}

func secretKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || !strings.HasPrefix(secret, SecretPrefix) || len(key) == 0 {
		return nil, errors.New("not a whsec_ secret")
	}
	return key, nil
}

// Sign returns the signature of a message for the webhook-signature header:
// "v1," and the base64 HMAC-SHA256 of "id.timestamp.body".
func Sign(secret, id string, at time.Time, body []byte) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, at.Unix())
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// Verify checks a received delivery as a receiver does: a signature of the
// header list made with secret, and a timestamp within tolerance of now.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	id, ts, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing webhook headers")
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("bad webhook-timestamp")
	}
	at := time.Unix(unix, 0)
	if d := now.Sub(at); d > tolerance || d < -tolerance {
		return errors.New("webhook-timestamp too far from now")
	}
	want, err := Sign(secret, id, at, body)
	if err != nil {
		return err
	}
	for _, got := range strings.Fields(sigs) {
		if hmac.Equal([]byte(got), []byte(want)) {
			return nil
		}
	}
	return errors.New("no signature matches")
}

// Envelope is the body of every delivery. Data is the event's own data; the
// other fields are the same for every event type.
type Envelope struct {
	ID        string         `json:"id"` // the event id, also the webhook-id header
	Type      string         `json:"type"`
	TenantID  string         `json:"tenant_id"`
	CreatedAt time.Time      `json:"created_at"`
	Data      map[string]any `json:"data"`
}

// Request is one delivery attempt to make.
type Request struct {
	URL     string
	Secrets []string // the current secret, and the previous one while it is valid
	Body    Envelope
	Now     time.Time
}

// Result is what an attempt got.
type Result struct {
	StatusCode int // 0 when no answer came
	Latency    time.Duration
	Excerpt    string // the first MaxExcerpt bytes of the answer
	Err        error  // nil only for a 2xx answer
}

// MaxExcerpt bounds the part of an answer kept in the delivery log.
const MaxExcerpt = 1024

// Send makes one attempt: a signed POST through the sender's client. Only a
// 2xx answer succeeds; redirects are not followed.
func (s *Sender) Send(ctx context.Context, req Request) Result {
	body, err := json.Marshal(req.Body)
	if err != nil {
		return Result{Err: err}
	}
	var sigs []string
	for _, secret := range req.Secrets {
		sig, err := Sign(secret, req.Body.ID, req.Now, body)
		if err != nil {
			return Result{Err: err}
		}
		sigs = append(sigs, sig)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(body))
	if err != nil {
		return Result{Err: err}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("User-Agent", "Fideliza-Webhooks/1")
	hreq.Header.Set(HeaderID, req.Body.ID)
	hreq.Header.Set(HeaderTimestamp, strconv.FormatInt(req.Now.Unix(), 10))
	hreq.Header.Set(HeaderSignature, strings.Join(sigs, " "))
	started := time.Now()
	res, err := s.client.Do(hreq)
	r := Result{Latency: time.Since(started)}
	if err != nil {
		r.Err = err
		return r
	}
	defer res.Body.Close()
	excerpt, _ := io.ReadAll(io.LimitReader(res.Body, MaxExcerpt))
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10)) // let the connection be reused
	r.StatusCode, r.Excerpt, r.Latency = res.StatusCode, validPrefix(excerpt), time.Since(started)
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
	case res.StatusCode >= 300 && res.StatusCode < 400:
		r.Err = fmt.Errorf("answered %d: redirects are not followed", res.StatusCode)
	default:
		r.Err = fmt.Errorf("answered %d", res.StatusCode)
	}
	return r
}

// validPrefix returns b as text for the log: a character the cut split is
// dropped, other invalid bytes become U+FFFD.
func validPrefix(b []byte) string {
	for i := 0; i < utf8.UTFMax-1 && len(b) > 0 && !utf8.Valid(b); i++ {
		if r, _ := utf8.DecodeLastRune(b); r != utf8.RuneError {
			break
		}
		b = b[:len(b)-1]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
