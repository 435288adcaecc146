package storage

import (
	"context"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	"github.com/jackc/pgx/v5"
)

// EventsChannel is notified by every commit that adds outbox events (a
// trigger of migration 0028 on PostgreSQL).
const EventsChannel = "fideliza_events"

// listenRetry is the wait before a lost PostgreSQL listening connection is
// opened again.
const listenRetry = time.Second

// notifier wakes the waiters of a channel. On PostgreSQL one connection
// per channel LISTENs while the DB is open, so a notification from any
// process wakes this one's waiters; on SQLite a commit of this process
// wakes every waiter (other processes are not heard: their waiters poll).
type notifier struct {
	mu        sync.Mutex
	waiters   map[string]map[chan struct{}]bool
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
	if n.waiters == nil {
		n.waiters, n.listening = map[string]map[chan struct{}]bool{}, map[string]bool{}
		n.ctx, n.stop = context.WithCancel(context.Background())
	}
	if n.waiters[channel] == nil {
		n.waiters[channel] = map[chan struct{}]bool{}
	}
	n.waiters[channel][wake] = true
	if db.pgx != nil && !n.listening[channel] {
		n.listening[channel] = true
		go db.listen(n.ctx, channel)
	}
	n.mu.Unlock()
	context.AfterFunc(ctx, func() {
		n.mu.Lock()
		delete(n.waiters[channel], wake)
		n.mu.Unlock()
	})
	return wake
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
	db.notify.wake(channel) // whatever was notified while no one listened
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return
		}
		db.notify.wake(channel)
	}
}

// close ends the listening connections.
func (n *notifier) close() {
	n.mu.Lock()
	if n.stop != nil {
		n.stop()
	}
	n.mu.Unlock()
}
