package rest

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	coderws "github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/graph"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// wsMessage is a message of the graphql-transport-ws protocol.
type wsMessage struct {
	ID      string         `json:"id,omitempty"`
	Type    string         `json:"type"`
	Payload map[string]any `json:"payload,omitempty"`
}

// wsClient is one connection to /graphql/ws.
type wsClient struct {
	t    testing.TB
	conn *coderws.Conn
}

// wsDial opens a connection and sends connection_init with token.
func wsDial(t testing.TB, serverURL, token string) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := coderws.Dial(ctx, "ws"+strings.TrimPrefix(serverURL, "http")+"/graphql/ws",
		&coderws.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.CloseNow() })
	require.Equal(t, "graphql-transport-ws", conn.Subprotocol())
	c := &wsClient{t: t, conn: conn}
	c.send(wsMessage{Type: "connection_init", Payload: map[string]any{"authorization": "Bearer " + token}})
	return c
}

func (c *wsClient) send(m wsMessage) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(c.t, wsjson.Write(ctx, c.conn, m))
}

// next reads the next message other than a ping or a pong.
func (c *wsClient) next() wsMessage {
	c.t.Helper()
	m, err := c.read()
	require.NoError(c.t, err)
	return m
}

// read reads the next message other than a ping or a pong, or the error
// that ended the connection.
func (c *wsClient) read() (wsMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		var m wsMessage
		if err := wsjson.Read(ctx, c.conn, &m); err != nil {
			return m, err
		}
		if m.Type != "ping" && m.Type != "pong" && m.Type != "ka" {
			return m, nil
		}
	}
}

// acknowledged reads connection_ack, or the close of a connection whose
// token expired before it (false).
func (c *wsClient) acknowledged() bool {
	c.t.Helper()
	m, err := c.read()
	if err != nil {
		require.Equal(c.t, coderws.StatusCode(4403), coderws.CloseStatus(err), "%v", err)
		return false
	}
	require.Equal(c.t, "connection_ack", m.Type)
	return true
}

// ready reads connection_ack.
func (c *wsClient) ready() *wsClient {
	c.t.Helper()
	require.Equal(c.t, "connection_ack", c.next().Type)
	return c
}

// initAnswer is the server's first message's type, or empty when it
// closed the connection instead.
func (c *wsClient) initAnswer() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var m wsMessage
	if err := wsjson.Read(ctx, c.conn, &m); err != nil {
		return ""
	}
	return m.Type
}

// closedWith reads until the server closes the connection and returns the
// close code.
func (c *wsClient) closedWith() coderws.StatusCode {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		_, _, err := c.conn.Read(ctx)
		if err != nil {
			require.NotErrorIs(c.t, err, context.DeadlineExceeded, "the server did not close the connection")
			return coderws.CloseStatus(err)
		}
	}
}

func (c *wsClient) subscribe(id, field string) {
	c.send(wsMessage{ID: id, Type: "subscribe", Payload: map[string]any{
		"query": "subscription { " + field + " { id tenantID type subjectID data } }",
	}})
}

// event is the event the next message carries, past the probes of
// waitSubscribed.
func (c *wsClient) event(id, field string) map[string]any {
	c.t.Helper()
	for {
		if e := c.anyEvent(id, field); e["subjectID"] != "probe" {
			return e
		}
	}
}

func (c *wsClient) anyEvent(id, field string) map[string]any {
	c.t.Helper()
	m := c.next()
	require.Equal(c.t, wsMessage{ID: id, Type: "next"}, wsMessage{ID: m.ID, Type: m.Type}, "%v", m.Payload)
	return m.Payload["data"].(map[string]any)[field].(map[string]any)
}

// recordEvent commits an outbox event as the operations do.
func recordEvent(t *testing.T, a *app.App, tenantID, typ, subject string) {
	t.Helper()
	ctx := viewer.SystemContext(context.Background())
	require.NoError(t, a.DB.InTx(ctx, func(tx storage.Tx) error {
		return outbox.Record(ctx, tx.Ent, time.Now(), tenantID, typ, subject, map[string]any{"subject": subject})
	}))
}

// TestSubscriptions speaks graphql-transport-ws to /graphql/ws: each field
// delivers its tenant's events of its type only, checks its scope, and the
// connection is refused or closed for a bad, revoked or expired token, too
// many connections or messages, and idleness.
func TestSubscriptions(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newTestEnv(t, db, func(s *ServerSetup) {
			s.Subscriptions = graph.SubscriptionLimits{ConnectionsPerClient: 3, MessagesPerSecond: 5,
				IdleTimeout: 2 * time.Second, Recheck: 200 * time.Millisecond}
		})
		ctx := viewer.SystemContext(context.Background())
		other, err := e.app.Backoffice.CreateTenant(ctx, "Loja B", nil)
		require.NoError(t, err)
		analyst, err := e.app.Auth.IssueUserToken(ctx, e.tenantID, viewer.RoleAnalyst, "office", time.Hour)
		require.NoError(t, err)

		t.Run("each tenant's events of the field's type", func(t *testing.T) {
			c := wsDial(t, e.srv.URL, analyst).ready()
			c.subscribe("s", "salesProcessed")
			// The subscription runs once an event reaches it: a sale of
			// this tenant is awaited before the test's own.
			waitSubscribed(t, e.app, e.tenantID, c, "s")
			recordEvent(t, e.app, other.ID, outbox.SaleProcessed, "sal_of_the_other_tenant")
			recordEvent(t, e.app, e.tenantID, outbox.CustomerLevelChanged, "cus_level")
			recordEvent(t, e.app, e.tenantID, outbox.SaleProcessed, "sal_ours")
			got := c.event("s", "salesProcessed")
			require.Equal(t, []any{"sal_ours", "sale.processed", e.tenantID, map[string]any{"subject": "sal_ours"}},
				[]any{got["subjectID"], got["type"], got["tenantID"], got["data"]})
			c.send(wsMessage{ID: "s", Type: "complete"})
		})

		t.Run("scopes per field", func(t *testing.T) {
			tok := e.tokenFor(t, "customers:read")
			c := wsDial(t, e.srv.URL, tok).ready()
			c.subscribe("sales", "salesProcessed")
			m := c.next()
			require.Equal(t, "next", m.Type, "%v", m)
			require.Nil(t, m.Payload["data"])
			require.Equal(t, "insufficient_scope", m.Payload["errors"].([]any)[0].(map[string]any)["extensions"].(map[string]any)["code"])
			require.Equal(t, wsMessage{ID: "sales", Type: "complete"}, c.next(), "the subscription ends")
			c.subscribe("levels", "customerLevelChanges")
			waitSubscribedTo(t, e.app, e.tenantID, c, "levels", outbox.CustomerLevelChanged, "customerLevelChanges")
			recordEvent(t, e.app, e.tenantID, outbox.CustomerLevelChanged, "cus_up")
			require.Equal(t, "cus_up", c.event("levels", "customerLevelChanges")["subjectID"])
		})

		t.Run("no valid token in connection_init", func(t *testing.T) {
			c := wsDial(t, e.srv.URL, "not-a-token")
			require.Equal(t, coderws.StatusCode(4403), c.closedWith())
		})

		t.Run("a revoked client's connection is closed", func(t *testing.T) {
			cc, err := e.app.Backoffice.CreateClient(ctx, e.tenantID, apiclient.KindOauth, "revoked later", nil)
			require.NoError(t, err)
			tok, err := e.app.Auth.IssueToken(context.Background(), auth.TokenRequest{
				GrantType: "client_credentials", ClientID: cc.Client.ID, ClientSecret: cc.Secret, Scope: "customers:read",
			})
			require.NoError(t, err)
			c := wsDial(t, e.srv.URL, tok.AccessToken).ready()
			c.subscribe("levels", "customerLevelChanges")
			_, err = e.app.Backoffice.RevokeClient(viewer.NewContext(context.Background(), viewer.Viewer{Role: viewer.RoleAdmin, TenantID: e.tenantID, Subject: "user:admin"}), cc.Client.ID)
			require.NoError(t, err)
			require.Equal(t, coderws.StatusCode(4401), c.closedWith())
		})

		t.Run("an expired token's connection is closed", func(t *testing.T) {
			// Under load a brief token may expire before its connection is
			// acknowledged (4403 then): it is given a longer life.
			for ttl := time.Second; ; ttl *= 2 {
				short, err := e.app.Auth.IssueUserToken(ctx, e.tenantID, viewer.RoleAnalyst, "brief", ttl)
				require.NoError(t, err)
				c := wsDial(t, e.srv.URL, short)
				if !c.acknowledged() {
					require.Less(t, ttl, 16*time.Second, "no token lived to its connection's acknowledgement")
					continue
				}
				c.subscribe("s", "salesProcessed")
				require.Equal(t, coderws.StatusCode(4401), c.closedWith())
				return
			}
		})

		t.Run("connections per client", func(t *testing.T) {
			tok, err := e.app.Auth.IssueUserToken(ctx, e.tenantID, viewer.RoleAnalyst, "many", time.Hour)
			require.NoError(t, err)
			open := make([]*wsClient, 3)
			for i := range open {
				open[i] = wsDial(t, e.srv.URL, tok).ready()
			}
			require.Equal(t, coderws.StatusCode(4429), wsDial(t, e.srv.URL, tok).closedWith())
			// A connection closed by its client gives its place back.
			require.NoError(t, open[0].conn.Close(coderws.StatusNormalClosure, ""))
			require.Eventually(t, func() bool {
				c := wsDial(t, e.srv.URL, tok)
				defer func() { _ = c.conn.CloseNow() }()
				return c.initAnswer() == "connection_ack"
			}, 5*time.Second, 50*time.Millisecond)
		})

		t.Run("messages per second", func(t *testing.T) {
			c := wsDial(t, e.srv.URL, analyst).ready()
			for range 20 {
				if c.conn.Write(context.Background(), coderws.MessageText, []byte(`{"type":"ping"}`)) != nil {
					break
				}
			}
			require.Equal(t, coderws.StatusCode(4429), c.closedWith())
		})

		t.Run("idle connection", func(t *testing.T) {
			c := wsDial(t, e.srv.URL, analyst).ready()
			require.Equal(t, coderws.StatusCode(4408), c.closedWith())
		})
	})
}

// waitSubscribed records sales of tenantID until one reaches the
// subscription id of c: from then on, every event committed reaches it.
func waitSubscribed(t *testing.T, a *app.App, tenantID string, c *wsClient, id string) {
	t.Helper()
	waitSubscribedTo(t, a, tenantID, c, id, outbox.SaleProcessed, "salesProcessed")
}

func waitSubscribedTo(t *testing.T, a *app.App, tenantID string, c *wsClient, id, typ, field string) {
	t.Helper()
	waitSubscribedAbout(t, a, tenantID, c, id, typ, field, "probe")
}

// waitSubscribedAbout is waitSubscribedTo with probes about subject, for
// a subscription to one subject's events: a probe's data is {"subject":
// subject}.
func waitSubscribedAbout(t *testing.T, a *app.App, tenantID string, c *wsClient, id, typ, field, subject string) {
	t.Helper()
	// A probe is recorded, and read; the subscription may have begun after
	// it was committed, so probes go on until one arrives.
	got := make(chan struct{})
	go func() {
		defer close(got)
		c.anyEvent(id, field)
	}()
	for {
		recordEvent(t, a, tenantID, typ, subject)
		select {
		case <-got:
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestSubscriptionsAcrossProcesses: a subscriber of one serve process gets
// the events another process commits to the same database (PostgreSQL:
// LISTEN/NOTIFY; SQLite: the feed's poll).
func TestSubscriptionsAcrossProcesses(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			u := storagetest.URL(t, d, true)
			open := func() *storage.DB { return storagetest.OpenURL(t, u) }
			first := newTestEnv(t, open())
			// The second process: its own pool, application and server.
			db2 := open()
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			srv := httptest.NewUnstartedServer(nil)
			a2 := app.New(&app.Config{DB: db2, Auth: auth.NewService(db2.Ent, "http://"+srv.Listener.Addr().String(), "fideliza"), Log: log})
			srv.Config.Handler = NewHandler(a2, log, Config{})
			srv.Start()
			t.Cleanup(srv.Close)
			tok, err := a2.Auth.IssueUserToken(context.Background(), first.tenantID, viewer.RoleAnalyst, "office", time.Hour)
			require.NoError(t, err)

			c := wsDial(t, srv.URL, tok).ready()
			c.subscribe("s", "salesProcessed")
			waitSubscribed(t, first.app, first.tenantID, c, "s") // committed by the first process
			recordEvent(t, first.app, first.tenantID, outbox.SaleProcessed, "sal_elsewhere")
			require.Equal(t, "sal_elsewhere", c.event("s", "salesProcessed")["subjectID"])
		})
	}
}
