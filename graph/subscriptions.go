package graph

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/webhooks"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/viewer"
)

// Subscriptions over WebSocket (graphql-transport-ws, docs/backoffice.md):
// an address holds a bounded number of connections not yet acknowledged,
// each given InitTimeout from its upgrade; the token in connection_init is
// checked as a bearer token is, then again every Recheck (a revoked token)
// and at its expiry; each connection is bounded in messages from the
// client and closed when idle, each client in connections, and a
// subscriber that leaves webhooks.FeedBuffer events unread is dropped with
// its connection. Every connection is closed when the transport is done
// with it (wsconn.go).

// SubscriptionScopes maps every subscription field to the scope it needs
// (subscriptions run outside RootFieldScopes' middleware).
var SubscriptionScopes = map[string]string{
	"salesProcessed":       kernel.ScopeBackoffice,
	"customerLevelChanges": "customers:read",
	"redemptions":          "campaigns:read",
	"importProgress":       "customers:read",
}

// SubscriptionLimits bound the subscriptions' connections; a zero field is
// its default.
type SubscriptionLimits struct {
	// ConnectionsPerClient bounds a client's (or user's) open connections
	// in this process; default 20.
	ConnectionsPerClient int
	// MessagesPerSecond bounds the messages a client sends on a connection
	// (a burst of twice as many); default 10.
	MessagesPerSecond float64
	// IdleTimeout closes a connection without a subscription that long;
	// default 5 minutes.
	IdleTimeout time.Duration
	// Recheck is how often the connection's token is verified again (a
	// revoked client's); default 30 seconds.
	Recheck time.Duration
	// InitTimeout closes a connection that has not been acknowledged
	// (a valid connection_init) that long after its upgrade; default 10
	// seconds.
	InitTimeout time.Duration
	// PendingPerAddress bounds the connections of one client address
	// (Config.ClientAddress) not yet acknowledged; default 20.
	PendingPerAddress int
}

func (l SubscriptionLimits) withDefaults() SubscriptionLimits {
	if l.ConnectionsPerClient <= 0 {
		l.ConnectionsPerClient = 20
	}
	if l.MessagesPerSecond <= 0 {
		l.MessagesPerSecond = 10
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = 5 * time.Minute
	}
	if l.Recheck <= 0 {
		l.Recheck = 30 * time.Second
	}
	if l.InitTimeout <= 0 {
		l.InitTimeout = 10 * time.Second
	}
	if l.PendingPerAddress <= 0 {
		l.PendingPerAddress = 20
	}
	return l
}

// The close codes of the connections the service ends.
const (
	closeBadRequest      = 4400 // a first message that is not a connection_init the transport can read
	closeUnauthorized    = 4401 // the token expired or was revoked
	closeForbidden       = 4403 // connection_init without a valid token
	closeIdle            = 4408 // no subscription for IdleTimeout
	closeInitTimeout     = 4408 // not acknowledged InitTimeout after the upgrade
	closeTooManyMessages = 4429 // over MessagesPerSecond, or ConnectionsPerClient
	closeSlowConsumer    = 4413 // events left unread (webhooks.FeedBuffer)
)

// writeTimeout bounds one message's write: a client that reads nothing is
// closed instead of holding its events.
const writeTimeout = 10 * time.Second

// subscriptions serves the WebSocket connections.
type subscriptions struct {
	app     *app.App
	limits  SubscriptionLimits
	address func(*http.Request) string // a client's address (Config.ClientAddress)
	mu      sync.Mutex
	clients map[string]int // open connections per tenant and subject
	pending map[string]int // connections not yet acknowledged per client address
}

type wsConnKey struct{}

// serve hands a connection to gqlgen's transport with its state in the
// request's context, where Accept and InitFunc find it. The transport runs
// in a goroutine of its own, and the handler returns once the connection
// is accepted (hijacked): the connection's read loop then holds a shallow
// stack, not net/http's, chi's and the middlewares' frames beneath it, and
// net/http lets go of the request (docs/performance.md). Its context keeps
// the request's values without its end, which comes when the handler
// returns; it ends when the transport is done with the connection, which
// is then closed, whichever way the transport left it, and its
// subscriptions' work with it. An address with PendingPerAddress
// connections not yet acknowledged is refused before the upgrade.
func (s *subscriptions) serve(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &wsConn{subs: s, address: s.address(r), accepted: make(chan struct{})}
		if !s.hold(c) {
			w.Header().Set("Content-Type", mediaJSON+"; charset=utf-8")
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(s.limits.InitTimeout.Seconds()))))
			writeRequestError(w, http.StatusTooManyRequests, &graphql.Response{Errors: gqlerror.List{limitError(codeTooManyConnections,
				"the address has its most subscriptions connections not yet acknowledged (%d)", s.limits.PendingPerAddress)}})
			return
		}
		ctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(r.Context()), wsConnKey{}, c))
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer s.release(c)
			defer cancel()
			defer c.end()
			defer func() {
				if p := recover(); p != nil {
					s.app.Log.ErrorContext(ctx, "subscriptions connection panicked", "panic", p)
				}
			}()
			next.ServeHTTP(w, r.WithContext(ctx))
		}()
		select {
		case <-c.accepted:
		case <-done: // refused before the upgrade: the response is written
		}
	})
}

// hold counts a connection among its address's not yet acknowledged;
// false when the address has its most.
func (s *subscriptions) hold(c *wsConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = map[string]int{}
	}
	if s.pending[c.address] >= s.limits.PendingPerAddress {
		return false
	}
	s.pending[c.address]++
	c.pending = true
	return true
}

// letGo gives back the connection's place among its address's not yet
// acknowledged, once.
func (s *subscriptions) letGo(c *wsConn) {
	c.mu.Lock()
	was := c.pending
	c.pending = false
	c.mu.Unlock()
	if !was {
		return
	}
	s.mu.Lock()
	if s.pending[c.address]--; s.pending[c.address] <= 0 {
		delete(s.pending, c.address)
	}
	s.mu.Unlock()
}

// release gives back the connection's places among its address's and its
// client's.
func (s *subscriptions) release(c *wsConn) {
	s.letGo(c)
	if c.client == "" {
		return
	}
	s.mu.Lock()
	if s.clients[c.client]--; s.clients[c.client] <= 0 {
		delete(s.clients, c.client)
	}
	s.mu.Unlock()
}

func (s *subscriptions) transport() transport.Websocket {
	return transport.Websocket{
		// The token is in connection_init, never a cookie: a page of any
		// origin may open the connection (no cross-site hijacking of a
		// session to fear), and gets nothing without a token.
		Implementation: acceptor{transport.CoderWebsocketImplementation{AcceptOptions: coderws.AcceptOptions{InsecureSkipVerify: true}}},
		InitFunc:       s.init,
		// No InitTimeout: the acceptor's, from the upgrade, closes with
		// graphql-transport-ws's code.
		PayloadReadLimit: ptr(int64(64 << 10)),
	}
}

func ptr[T any](v T) *T { return &v }

// init checks connection_init's token and the client's connections.
func (s *subscriptions) init(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	c, _ := ctx.Value(wsConnKey{}).(*wsConn)
	refuse := func(code int, msg string) (context.Context, *transport.InitPayload, error) {
		return transport.WithWebsocketCloseCode(transport.AppendCloseReason(ctx, msg), code), nil, &initError{msg}
	}
	if c == nil || c.WebsocketConn == nil {
		return refuse(closeForbidden, "not a subscriptions connection")
	}
	raw := strings.TrimSpace(p.Authorization())
	if scheme, token, ok := strings.Cut(raw, " "); ok && strings.EqualFold(scheme, "Bearer") {
		raw = strings.TrimSpace(token)
	}
	if raw == "" {
		return refuse(closeForbidden, `invalid_token: connection_init needs {"authorization": "Bearer <access token>"}`)
	}
	v, err := s.app.Auth.Authenticate(ctx, raw)
	if err != nil {
		return refuse(closeForbidden, "invalid_token: the access token is invalid or expired")
	}
	client := v.TenantID + "\x00" + v.Subject
	s.mu.Lock()
	if s.clients == nil {
		s.clients = map[string]int{}
	}
	full := s.clients[client] >= s.limits.ConnectionsPerClient
	if !full {
		s.clients[client]++
		c.client = client
	}
	s.mu.Unlock()
	if full {
		return refuse(closeTooManyMessages, "too_many_connections: the client has its most subscriptions connections open")
	}
	c.token, c.viewer = raw, v
	c.acknowledged()
	c.watch(ctx, tokenExpiry(raw))
	return viewer.NewContext(ctx, v), nil, nil
}

type initError struct{ msg string }

func (e *initError) Error() string { return e.msg }

// tokenExpiry reads a verified JWT's exp (zero when it has none).
func tokenExpiry(raw string) time.Time {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}
	}
	var cl struct {
		Exp float64 `json:"exp"`
	}
	if json.Unmarshal(payload, &cl) != nil || cl.Exp == 0 {
		return time.Time{}
	}
	return time.Unix(int64(cl.Exp), 0)
}

// watch closes the connection when its token expires or no longer
// verifies, or when it has been idle for IdleTimeout, until the connection
// (ctx) ends. Timers check, not a goroutine of the connection's: an idle
// connection costs less (docs/performance.md).
func (c *wsConn) watch(ctx context.Context, expiry time.Time) {
	l := c.subs.limits
	every := min(l.Recheck, l.IdleTimeout) / 2
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checked = time.Now()
	c.tick = time.AfterFunc(every, func() {
		if c.check(ctx) && ctx.Err() == nil {
			c.mu.Lock()
			c.tick.Reset(every)
			c.mu.Unlock()
		}
	})
	var expired *time.Timer
	if !expiry.IsZero() {
		expired = time.AfterFunc(time.Until(expiry), func() { c.shut(closeUnauthorized, "invalid_token: the access token expired") })
	}
	context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.tick.Stop()
		c.mu.Unlock()
		if expired != nil {
			expired.Stop()
		}
	})
}

// check closes an idle connection, and one whose token no longer
// verifies once Recheck has passed; false when it closed it.
func (c *wsConn) check(ctx context.Context) bool {
	l := c.subs.limits
	now := time.Now()
	c.mu.Lock()
	idle := c.active == 0 && now.Sub(c.idleSince) >= l.IdleTimeout
	recheck := now.Sub(c.checked) >= l.Recheck
	if recheck {
		c.checked = now
	}
	c.mu.Unlock()
	if idle {
		c.shut(closeIdle, "idle: no subscription")
		return false
	}
	if recheck {
		if _, err := c.subs.app.Auth.Authenticate(ctx, c.token); err != nil && ctx.Err() == nil {
			c.shut(closeUnauthorized, "invalid_token: the access token is no longer valid")
			return false
		}
	}
	return true
}

// feed runs a subscription field: the scope of field, then the tenant's
// events of types until the subscription ends or the subscriber falls
// behind (which closes its connection).
func (r *Resolver) feed(ctx context.Context, field string, types ...string) (<-chan *ent.Event, error) {
	return r.feedFrom(ctx, field, func(ctx context.Context) (*webhooks.FeedSubscription, error) {
		return r.app.Webhooks.SubscribeEvents(ctx, types...)
	})
}

// feedFrom runs a subscription field on the events subscribe gives, once
// the scope of field is checked.
func (r *Resolver) feedFrom(ctx context.Context, field string, subscribe func(context.Context) (*webhooks.FeedSubscription, error)) (<-chan *ent.Event, error) {
	scope, ok := SubscriptionScopes[field]
	if !ok {
		return nil, apperr.Forbidden("insufficient_scope", "Subscription."+field+" has no scope")
	}
	if err := kernel.Authorize(ctx, scope); err != nil {
		return nil, err
	}
	sub, err := subscribe(ctx)
	if err != nil {
		return nil, err
	}
	c, _ := ctx.Value(wsConnKey{}).(*wsConn)
	if c == nil {
		return sub.Events, nil
	}
	c.mu.Lock()
	c.active++
	c.mu.Unlock()
	// gqlgen reads sub.Events itself, and ends the subscription's context
	// once the channel closes (the subscriber dropped) or the client
	// completes it: no goroutine of ours waits (docs/performance.md).
	context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.active--
		c.idleSince = time.Now()
		c.mu.Unlock()
		if sub.Dropped() {
			c.shut(closeSlowConsumer, "slow_consumer: events were left unread")
		}
	})
	return sub.Events, nil
}
