package rest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	coderws "github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fideliza/fideliza/graph"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// wsOpen opens a connection to /graphql/ws speaking protocol and sends
// nothing.
func wsOpen(t testing.TB, serverURL, protocol string) (*wsClient, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, resp, err := coderws.Dial(ctx, "ws"+strings.TrimPrefix(serverURL, "http")+"/graphql/ws",
		&coderws.DialOptions{Subprotocols: []string{protocol}})
	if err != nil {
		return nil, resp, err
	}
	t.Cleanup(func() { _ = conn.CloseNow() })
	return &wsClient{t: t, conn: conn}, resp, nil
}

// writeRaw sends one text message as it is.
func (c *wsClient) writeRaw(msg string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(c.t, c.conn.Write(ctx, coderws.MessageText, []byte(msg)))
}

// openFiles counts this process's open file descriptors: the test's
// server runs in it.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(fds)
}

// TestSubscriptionsBadInitLeavesNothingOpen (issue 50, item 2): 2,000
// connection_init messages whose payload is not an object, their clients
// gone without a word, leave no descriptor open in the server; such a
// connection_init is answered with the close code 4400, on either protocol.
func TestSubscriptionsBadInitLeavesNothingOpen(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newTestEnv(t, db)
		before := openFiles(t)
		const clients, workers = 2000, 8
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for range clients / workers {
					c, _, err := wsOpen(t, e.srv.URL, []string{"graphql-transport-ws", "graphql-ws"}[w%2])
					if !assert.NoError(t, err) {
						return
					}
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					err = c.conn.Write(ctx, coderws.MessageText, []byte(`{"type":"connection_init","payload":"x"}`))
					cancel()
					if !assert.NoError(t, err) {
						return
					}
					_ = c.conn.CloseNow() // the client leaves
				}
			})
		}
		wg.Wait()
		// The server closes its side of each: the descriptors come back.
		after := 0
		assert.Eventually(t, func() bool { after = openFiles(t); return after <= before+50 }, 30*time.Second, 100*time.Millisecond)
		require.LessOrEqual(t, after, before+50, "open descriptors: %d before, %d after %d bad connection_init", before, after, clients)

		for _, protocol := range []string{"graphql-transport-ws", "graphql-ws"} {
			for _, payload := range []string{`"x"`, `1`, `[{}]`, `true`} {
				c, _, err := wsOpen(t, e.srv.URL, protocol)
				require.NoError(t, err)
				c.writeRaw(`{"type":"connection_init","payload":` + payload + `}`)
				require.Equal(t, coderws.StatusCode(4400), c.closedWith(), "%s, payload %s", protocol, payload)
			}
		}
	})
}

// TestSubscriptionsPendingConnections (issue 50, item 2): an address holds
// at most PendingPerAddress connections not yet acknowledged (the next
// upgrade is refused with 429), and a connection that sends no
// connection_init is closed with 4408 InitTimeout after its upgrade.
func TestSubscriptionsPendingConnections(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newTestEnv(t, db, func(s *ServerSetup) {
			s.Subscriptions = graph.SubscriptionLimits{PendingPerAddress: 3, InitTimeout: 3 * time.Second}
		})
		analyst, err := e.app.Auth.IssueUserToken(viewer.SystemContext(context.Background()), e.tenantID, viewer.RoleAnalyst, "office", time.Hour)
		require.NoError(t, err)

		began := time.Now()
		pending := make([]*wsClient, 3)
		for i := range pending {
			c, _, err := wsOpen(t, e.srv.URL, "graphql-transport-ws")
			require.NoError(t, err)
			pending[i] = c
		}
		_, resp, err := wsOpen(t, e.srv.URL, "graphql-transport-ws")
		require.Error(t, err, "a fourth connection not yet acknowledged")
		require.NotNil(t, resp)
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Contains(t, string(body), `"code":"too_many_connections"`)
		require.NotEmpty(t, resp.Header.Get("Retry-After"))

		// An acknowledged connection is no longer pending: its place is
		// free.
		pending[0].send(wsMessage{Type: "connection_init", Payload: map[string]any{"authorization": "Bearer " + analyst}})
		pending[0].ready()
		c, _, err := wsOpen(t, e.srv.URL, "graphql-transport-ws")
		require.NoError(t, err)

		// The others, silent, are closed at InitTimeout from their upgrade.
		require.Equal(t, coderws.StatusCode(4408), pending[1].closedWith())
		require.Less(t, time.Since(began), 6*time.Second)
		require.Equal(t, coderws.StatusCode(4408), c.closedWith())
	})
}

// TestSubscriptionBombsRefused (issue 50, item 3): a document over the
// limits sent as a subscription, sent whole or as a persisted query, is
// refused as over HTTP, with the protocol's error and before any work;
// a subscription with two root fields is the protocol's error too; and a
// subscription's work ends with its connection.
func TestSubscriptionBombsRefused(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newTestEnv(t, db)
		analyst, err := e.app.Auth.IssueUserToken(viewer.SystemContext(context.Background()), e.tenantID, viewer.RoleAnalyst, "office", time.Hour)
		require.NoError(t, err)
		bomb := fragmentChainIn("subscription { salesProcessed { ...F0 } }", "Event", 31)
		for _, c := range []struct {
			name, code string
			payload    map[string]any
		}{
			{"31 fragments each spreading the next twice", "query_too_complex", map[string]any{"query": bomb}},
			{"as an automatic persisted query", "query_too_complex", map[string]any{"query": bomb, "extensions": persisted(bomb)}},
			{"21 fragments", "query_too_complex", map[string]any{"query": fragmentChainIn("subscription { salesProcessed { ...F0 } }", "Event", 21)}},
			{"id 10,000 times", "query_too_complex", map[string]any{"query": "subscription { salesProcessed { " + strings.Repeat("id ", 10_000) + "} }"}},
			{"two root fields", "invalid_query", map[string]any{"query": "subscription { salesProcessed { id } redemptions { id } }"}},
			{"one root field twice, aliased", "invalid_query", map[string]any{"query": "subscription { a: salesProcessed { id } b: salesProcessed { id } }"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				ws := wsDial(t, e.srv.URL, analyst).ready()
				began := time.Now()
				ws.send(wsMessage{ID: "b", Type: "subscribe", Payload: c.payload})
				m := ws.nextRaw()
				t.Logf("%s: %s %s in %s", c.name, m.Type, m.Payload, time.Since(began))
				require.Equal(t, "error", m.Type, "%s", m.Payload)
				require.Equal(t, "b", m.ID)
				require.Less(t, time.Since(began), 2*time.Second)
				var errs []struct {
					Extensions map[string]any `json:"extensions"`
				}
				require.NoError(t, json.Unmarshal(m.Payload, &errs))
				require.Len(t, errs, 1, "%s", m.Payload)
				require.Equal(t, c.code, errs[0].Extensions["code"], "%s", m.Payload)
			})
		}

		// The subscription's work, and the feed's reader with it, ends
		// when its client leaves without completing it (PostgreSQL's
		// listener on the events' channel is the database's, and stays).
		ignore := goleak.IgnoreCurrent()
		listener := goleak.IgnoreAnyFunction("github.com/fideliza/fideliza/storage.(*DB).listen")
		ws := wsDial(t, e.srv.URL, analyst).ready()
		ws.subscribe("s", "salesProcessed")
		waitSubscribed(t, e.app, e.tenantID, ws, "s")
		_ = ws.conn.CloseNow()
		assert.Eventually(t, func() bool { return goleak.Find(ignore, listener) == nil }, 10*time.Second, 50*time.Millisecond)
		goleak.VerifyNone(t, ignore, listener)
	})
}

// rawMessage is a message whose payload is left as sent (an error
// message's is a list).
type rawMessage struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// nextRaw reads the next message other than a ping or a pong.
func (c *wsClient) nextRaw() rawMessage {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		var m rawMessage
		require.NoError(c.t, wsjson.Read(ctx, c.conn, &m))
		if m.Type != "ping" && m.Type != "pong" && m.Type != "ka" {
			return m
		}
	}
}
