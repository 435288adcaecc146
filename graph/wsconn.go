package graph

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"

	"github.com/fideliza/fideliza/viewer"
)

// acceptor wraps each accepted connection in the connection's state, and
// gives it InitTimeout from the upgrade to be acknowledged.
type acceptor struct {
	transport.WebsocketImplementation
}

func (a acceptor) Accept(w http.ResponseWriter, r *http.Request, o transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	conn, err := a.WebsocketImplementation.Accept(w, r, o)
	c, ok := r.Context().Value(wsConnKey{}).(*wsConn)
	if err != nil || !ok {
		return conn, err
	}
	c.WebsocketConn = conn
	c.mu.Lock()
	c.idleSince = time.Now()
	c.initDeadline = time.AfterFunc(c.subs.limits.InitTimeout, func() {
		c.shut(closeInitTimeout, "connection_init_timeout: no valid connection_init within the time allowed")
	})
	c.mu.Unlock()
	close(c.accepted)
	return c, nil
}

// wsConn is a connection and its state: its viewer, its messages' budget,
// its subscriptions.
type wsConn struct {
	transport.WebsocketConn
	subs     *subscriptions
	accepted chan struct{} // closed once the connection is hijacked
	address  string        // counted in subscriptions.pending until acknowledged
	client   string        // counted in subscriptions.clients
	token    string
	viewer   viewer.Viewer
	read     bool // a message was read: the next is not the first
	mu       sync.Mutex
	// Guarded by mu:
	pending      bool        // counted in subscriptions.pending
	initDeadline *time.Timer // closes the connection unless acknowledged
	budget       float64     // messages the client may send now
	refilled     time.Time
	active       int         // subscriptions running
	idleSince    time.Time   // when the last one ended (or the connection began)
	tick         *time.Timer // watch's next check
	checked      time.Time   // when the token was last verified
	closed       bool
}

// NextReader counts the client's messages: one over the budget closes the
// connection. The first message, connection_init, is checked before the
// transport reads it: one that is not a JSON object, or whose payload is
// not an object, closes the connection with 4400 (graphql-transport-ws).
func (c *wsConn) NextReader() (int, io.Reader, error) {
	t, r, err := c.WebsocketConn.NextReader()
	if err != nil {
		return t, r, err
	}
	rate := c.subs.limits.MessagesPerSecond
	now := time.Now()
	c.mu.Lock()
	if c.refilled.IsZero() {
		c.budget = 2 * rate
	} else {
		c.budget = min(2*rate, c.budget+now.Sub(c.refilled).Seconds()*rate)
	}
	c.refilled = now
	c.budget--
	over := c.budget < 0
	c.mu.Unlock()
	if over {
		c.shut(closeTooManyMessages, "too_many_messages: over the messages a connection may send per second")
		return t, nil, transport.ErrWebsocketClosed
	}
	if !c.read {
		c.read = true
		if r, err = firstMessage(r); err != nil {
			c.shut(closeBadRequest, err.Error())
			return t, nil, transport.ErrWebsocketClosed
		}
	}
	return t, r, nil
}

// firstMessage reads a connection's first message (within the transport's
// read limit) and refuses one whose payload the transport could not take
// as connection_init's.
func firstMessage(r io.Reader) (io.Reader, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var m struct {
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return nil, &initError{"invalid_message: a message is a JSON object"}
	}
	if p := bytes.TrimSpace(m.Payload); m.Type == "connection_init" && len(p) > 0 && p[0] != '{' && string(p) != "null" {
		return nil, &initError{"invalid_message: the payload of connection_init is an object"}
	}
	return bytes.NewReader(raw), nil
}

// WriteJSON writes one message, closing a connection that does not take
// it within writeTimeout.
func (c *wsConn) WriteJSON(v any) error {
	stuck := time.AfterFunc(writeTimeout, func() { _ = c.Close() })
	defer stuck.Stop()
	return c.WebsocketConn.WriteJSON(v)
}

// SetReadLimit and SetReadDeadline reach the connection beneath.
func (c *wsConn) SetReadLimit(limit int64) {
	if l, ok := c.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		l.SetReadLimit(limit)
	}
}

func (c *wsConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

// shut closes the connection with code and reason, once.
func (c *wsConn) shut(code int, reason string) {
	c.mu.Lock()
	done := c.closed
	c.closed = true
	c.mu.Unlock()
	if !done {
		_ = c.WriteClose(code, reason)
	}
}

// acknowledged ends the connection's wait for its connection_init.
func (c *wsConn) acknowledged() {
	c.mu.Lock()
	c.initDeadline.Stop()
	c.mu.Unlock()
	c.subs.letGo(c)
}

// end closes a connection the transport is done with, whichever way it
// left: gqlgen returns without closing it on some paths (a connection_init
// it cannot decode), which would hold its descriptor for good.
func (c *wsConn) end() {
	if c.WebsocketConn == nil {
		return // refused before the upgrade
	}
	c.mu.Lock()
	c.initDeadline.Stop()
	c.mu.Unlock()
	c.shut(int(coderws.StatusNormalClosure), "terminated")
	_ = c.Close()
}
