package storage

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	"github.com/jackc/pgx/v5"
)

// EventsChannel is notified by every commit that adds outbox events (a
// trigger of migration 0028 on PostgreSQL).
const EventsChannel = "fideliza_events"

// ChangesChannel is notified of every change of the change feed, with
// "<tenant id> <part> <origin>" (a trigger of migration 0029 on
// PostgreSQL; on SQLite, watchChanges reads the changes table's new rows).
const ChangesChannel = "fideliza_changes"

// listenRetry is the wait before a lost listening connection is opened
// again.
const listenRetry = time.Second

// watchInterval is how often, on SQLite, the changes watcher asks whether
// another connection (of any process) committed: a change reaches every
// process's subscribers within it and the time to read it.
const watchInterval = 250 * time.Millisecond

// notifier wakes the waiters of a channel. On PostgreSQL one connection
// per channel LISTENs while the DB is open, so a notification from any
// process wakes this one's waiters; on SQLite a commit of this process
// wakes every waiter (other processes are not heard: their waiters poll),
// and the subscribers of ChangesChannel hear every process's changes from
// a connection that watches the file (watchChanges).
type notifier struct {
	mu        sync.Mutex
	waiters   map[string]map[chan struct{}]bool
	subs      map[string]map[*Subscriber]bool
	up        map[string]bool // the channels whose connection LISTENs
	listening map[string]bool
	ctx       context.Context
	stop      context.CancelFunc
}

// Listen returns a channel that receives (at least) one value after each
// notification of channel, and one when a lost PostgreSQL connection is
// back (something may have been missed); a wake-up only says to look
// again, several coalesce into one. It stops when ctx ends.
func (db *DB) Listen(ctx context.Context, channel string) <-chan struct{} {
	n := &db.notify
	wake := make(chan struct{}, 1)
	n.mu.Lock()
	n.init()
	if n.waiters[channel] == nil {
		n.waiters[channel] = map[chan struct{}]bool{}
	}
	n.waiters[channel][wake] = true
	n.startLocked(db, channel)
	n.mu.Unlock()
	context.AfterFunc(ctx, func() {
		n.mu.Lock()
		delete(n.waiters[channel], wake)
		n.mu.Unlock()
	})
	return wake
}

// Subscriber hears a channel's notifications with their payloads. Its functions run on the listening connection's goroutine,
// one at a time: they must not block.
type Subscriber struct {
	// Notified is given each notification's payload, from any process.
	Notified func(payload string)
	// Listening is told when the listening connection opens (true) and
	// when it is lost (false): what is notified while it is lost is never
	// delivered.
	Listening func(on bool)
}

// Subscribe has s hear channel's notifications until ctx ends, and tells
// whether it will. On SQLite only ChangesChannel is heard (other channels
// return false): every change committed by any process of the file is
// delivered as PostgreSQL's trigger would, within watchInterval, the
// subscriber's own process's too. The first subscriber there opens the
// watching connection before Subscribe returns, so a subscriber is told it
// listens at once unless the file cannot be read.
func (db *DB) Subscribe(ctx context.Context, channel string, s *Subscriber) bool {
	if db.pgx == nil && channel != ChangesChannel {
		return false
	}
	n := &db.notify
	n.mu.Lock()
	n.init()
	if n.subs[channel] == nil {
		n.subs[channel] = map[*Subscriber]bool{}
	}
	n.subs[channel][s] = true
	if db.pgx == nil {
		n.watchLocked(db)
	} else {
		n.startLocked(db, channel)
	}
	up := n.up[channel]
	n.mu.Unlock()
	if up { // listening already: s is told so (or twice, should it open now)
		s.Listening(true)
	}
	context.AfterFunc(ctx, func() {
		n.mu.Lock()
		delete(n.subs[channel], s)
		n.mu.Unlock()
	})
	return true
}

// init makes the notifier's maps; n.mu is held.
func (n *notifier) init() {
	if n.waiters == nil {
		n.waiters, n.listening, n.up = map[string]map[chan struct{}]bool{}, map[string]bool{}, map[string]bool{}
		n.subs = map[string]map[*Subscriber]bool{}
		n.ctx, n.stop = context.WithCancel(context.Background())
	}
}

// startLocked starts listening on channel (PostgreSQL), once; n.mu is held.
func (n *notifier) startLocked(db *DB, channel string) {
	if db.pgx != nil && !n.listening[channel] {
		n.listening[channel] = true
		go db.listen(n.ctx, channel)
	}
}

// watchLocked starts watching the SQLite file for changes, once; n.mu is
// held. The first watching connection is opened here: up says whether it
// was.
func (n *notifier) watchLocked(db *DB) {
	if n.listening[ChangesChannel] {
		return
	}
	n.listening[ChangesChannel] = true
	w, err := db.openWatch(n.ctx)
	n.up[ChangesChannel] = err == nil
	go db.watchChanges(n.ctx, w)
}

// subscribers are the subscribers of channel; with up, the channel's
// connection is marked listening or lost.
func (n *notifier) subscribers(channel string, up ...bool) []*Subscriber {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(up) > 0 {
		n.up[channel] = up[0]
	}
	subs := make([]*Subscriber, 0, len(n.subs[channel]))
	for s := range n.subs[channel] {
		subs = append(subs, s)
	}
	return subs
}

// wake wakes the waiters of channel, or of every channel when it is "".
func (n *notifier) wake(channel string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for ch, waiters := range n.waiters {
		if channel != "" && ch != channel {
			continue
		}
		for w := range waiters {
			select {
			case w <- struct{}{}:
			default: // a wake-up is already pending
			}
		}
	}
}

// committed is called after each commit of this process.
func (db *DB) committed() {
	if db.Dialect == dialect.SQLite {
		db.notify.wake("")
	}
}

// listen holds a PostgreSQL connection LISTENing on channel until ctx
// ends, opening it again when it is lost.
func (db *DB) listen(ctx context.Context, channel string) {
	for ctx.Err() == nil {
		db.listenOnce(ctx, channel)
		select {
		case <-ctx.Done():
		case <-time.After(listenRetry):
		}
	}
}

func (db *DB) listenOnce(ctx context.Context, channel string) {
	conn, err := pgx.ConnectConfig(ctx, db.pgx.Config().ConnConfig.Copy())
	if err != nil {
		return
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return
	}
	for _, s := range db.notify.subscribers(channel, true) {
		s.Listening(true)
	}
	defer func() {
		for _, s := range db.notify.subscribers(channel, false) {
			s.Listening(false)
		}
	}()
	db.notify.wake(channel) // whatever was notified while no one listened
	for {
		note, err := conn.WaitForNotification(ctx)
		if err != nil {
			return
		}
		db.notify.wake(channel)
		for _, s := range db.notify.subscribers(channel) {
			s.Notified(note.Payload)
		}
	}
}

// changeWatch is the SQLite connection that watches for changes: the file's
// data_version as it last read it (which moves when another connection,
// of this process or another, commits) and the last change it delivered.
type changeWatch struct {
	conn    *sql.Conn
	version int64
	last    int64
}

// openWatch takes a read connection for watching, from what is committed
// now on: the changes before it are not delivered (the subscribers drop
// what they keep when told they listen).
func (db *DB) openWatch(ctx context.Context) (*changeWatch, error) {
	conn, err := db.Reads.Conn(ctx)
	if err != nil {
		return nil, err
	}
	w := &changeWatch{conn: conn}
	if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&w.version); err != nil {
		conn.Close()
		return nil, err
	}
	if err := conn.QueryRowContext(ctx, "SELECT coalesce(max(id), 0) FROM changes").Scan(&w.last); err != nil {
		conn.Close()
		return nil, err
	}
	return w, nil
}

// watchChanges delivers, until ctx ends, the changes committed to the
// SQLite file to the subscribers of ChangesChannel, starting from w (nil:
// not watching). A failed read closes the connection, tells the
// subscribers they do not listen, and opens it again after listenRetry.
func (db *DB) watchChanges(ctx context.Context, w *changeWatch) {
	n := &db.notify
	for ctx.Err() == nil {
		wait := watchInterval
		if w == nil {
			var err error
			if w, err = db.openWatch(ctx); err == nil {
				for _, s := range n.subscribers(ChangesChannel, true) {
					s.Listening(true)
				}
			} else {
				wait = listenRetry
			}
		} else if err := w.poll(ctx, n); err != nil {
			w.conn.Close()
			w = nil
			if ctx.Err() == nil {
				for _, s := range n.subscribers(ChangesChannel, false) {
					s.Listening(false)
				}
			}
			wait = listenRetry
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
	if w != nil {
		w.conn.Close()
	}
}

// poll delivers the changes committed since the last poll, when another
// connection committed since, with the payload PostgreSQL's trigger gives.
func (w *changeWatch) poll(ctx context.Context, n *notifier) error {
	var version int64
	if err := w.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&version); err != nil {
		return err
	}
	if version == w.version {
		return nil
	}
	rows, err := w.conn.QueryContext(ctx, "SELECT id, tenant_id, part, origin FROM changes WHERE id > ? ORDER BY id", w.last)
	if err != nil {
		return err
	}
	defer rows.Close()
	last := w.last
	var payloads []string
	for rows.Next() {
		var tenantID, part, origin string
		if err := rows.Scan(&last, &tenantID, &part, &origin); err != nil {
			return err
		}
		payloads = append(payloads, tenantID+" "+part+" "+origin)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	w.version, w.last = version, last
	subs := n.subscribers(ChangesChannel)
	for _, p := range payloads {
		for _, s := range subs {
			s.Notified(p)
		}
	}
	return nil
}

// close ends the listening connections.
func (n *notifier) close() {
	n.mu.Lock()
	if n.stop != nil {
		n.stop()
	}
	n.mu.Unlock()
}
