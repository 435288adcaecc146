package webhooks

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customerimport"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// The live feed of outbox events (GraphQL subscriptions): one reader per
// process, woken when a commit adds events (storage.DB.Listen: any process
// on PostgreSQL, this one on SQLite) and every FeedPoll while anyone
// listens, hands each new event to the subscribers of its tenant and type.
const (
	// FeedPoll is how often the feed looks for events without a
	// notification: those of other processes on SQLite, or any a lost
	// PostgreSQL connection missed.
	FeedPoll = time.Second
	// feedLookback is how long after its id was made an event may commit
	// and still be delivered: the feed reads again the events of that
	// window, as transactions commit in another order than they made ids.
	feedLookback = 5 * time.Second
	// FeedBuffer is how many events a subscriber may leave unread; one more
	// drops it (ErrSlowConsumer) rather than keeping them.
	FeedBuffer = 64
	feedPage   = 500
)

// FeedSubscription is one subscriber's events: Events is closed when the
// subscription's context ends or the subscriber is dropped for not keeping
// up (then Dropped says so).
type FeedSubscription struct {
	Events  <-chan *ent.Event
	events  chan *ent.Event
	tenant  string
	types   []string
	subject string // the events' subject; "": any
	since   string // the first event id it may receive
	mu      sync.Mutex
	slow    bool
}

// Dropped says whether the subscriber was dropped for leaving FeedBuffer
// events unread.
func (s *FeedSubscription) Dropped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.slow
}

type eventFeed struct {
	mu      sync.Mutex
	subs    map[*FeedSubscription]bool
	running bool
}

// SubscribeEvents gives the viewer the events of types of its tenant
// committed from now on, until ctx ends. The caller checks the scope each
// type needs.
func (a *Service) SubscribeEvents(ctx context.Context, types ...string) (*FeedSubscription, error) {
	if err := Rules.SubscribeEvents.Allow(ctx); err != nil {
		return nil, err
	}
	return a.subscribeEvents(ctx, "", types...)
}

// subscribeEvents subscribes to the events of types about subject ("":
// any).
func (a *Service) subscribeEvents(ctx context.Context, subject string, types ...string) (*FeedSubscription, error) {
	tenantID, err := kernel.ViewerTenant(ctx)
	if err != nil {
		return nil, err
	}
	events := make(chan *ent.Event, FeedBuffer)
	s := &FeedSubscription{Events: events, events: events, tenant: tenantID, types: types, subject: subject, since: eventIDAt(time.Now())}
	f := &a.feed
	f.mu.Lock()
	if f.subs == nil {
		f.subs = map[*FeedSubscription]bool{}
	}
	f.subs[s] = true
	if !f.running {
		f.running = true
		go a.readFeed()
	}
	f.mu.Unlock()
	context.AfterFunc(ctx, func() { f.drop(s, false) })
	return s, nil
}

// drop ends a subscription (slow: for not keeping up).
func (f *eventFeed) drop(s *FeedSubscription, slow bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropLocked(s, slow)
}

func (f *eventFeed) dropLocked(s *FeedSubscription, slow bool) {
	if !f.subs[s] {
		return
	}
	delete(f.subs, s)
	s.mu.Lock()
	s.slow = slow
	s.mu.Unlock()
	close(s.events)
}

// listened says whether anyone subscribes; when no one does, the reader
// stops (the next subscription starts another).
func (f *eventFeed) listened() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.subs) == 0 {
		f.running = false
	}
	return f.running
}

// readFeed reads new events while anyone subscribes.
func (a *Service) readFeed() {
	ctx, cancel := context.WithCancel(viewer.SystemContext(context.Background()))
	defer cancel()
	wake := a.k.DB.Listen(ctx, storage.EventsChannel)
	tick := time.NewTicker(FeedPoll)
	defer tick.Stop()
	seen := map[string]bool{} // the ids of the lookback window delivered
	for a.feed.listened() {
		if err := a.readEvents(ctx, seen); err != nil {
			a.k.Logger().WarnContext(ctx, "live events unread", "error", err)
		}
		select {
		case <-wake:
		case <-tick.C:
		}
	}
}

// readEvents hands the events of the lookback window not yet delivered to
// their subscribers.
func (a *Service) readEvents(ctx context.Context, seen map[string]bool) error {
	after := eventIDAt(time.Now().Add(-feedLookback))
	for id := range seen {
		if id <= after {
			delete(seen, id)
		}
	}
	for {
		events, err := a.k.DB.Ent.Event.Query().Where(event.IDGT(after)).Order(ent.Asc(event.FieldID)).Limit(feedPage).All(ctx)
		if err != nil {
			return err
		}
		for _, e := range events {
			after = e.ID
			if !seen[e.ID] {
				seen[e.ID] = true
				a.feed.hand(e)
			}
		}
		if len(events) < feedPage {
			return nil
		}
	}
}

// hand gives e to its subscribers; one whose buffer is full is dropped.
func (f *eventFeed) hand(e *ent.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		if s.tenant != e.TenantID || e.ID < s.since || !slices.Contains(s.types, e.Type) || (s.subject != "" && s.subject != e.SubjectID) {
			continue
		}
		select {
		case s.events <- e:
		default:
			f.dropLocked(s, true)
		}
	}
}

// eventIDAt is the smallest event id made at t: ids are ULIDs, ordered by
// the millisecond they were made in.
func eventIDAt(t time.Time) string {
	var id ulid.ULID
	_ = id.SetTime(ulid.Timestamp(t))
	return pid.Event + "_" + strings.ToLower(id.String())
}

// SubscribeImportProgress gives the viewer the progress events of one of
// its tenant's imports (outbox.CustomerImportProgressed) from now on,
// until ctx ends; an import the viewer cannot see is not found.
func (a *Service) SubscribeImportProgress(ctx context.Context, id string) (*FeedSubscription, error) {
	if err := Rules.SubscribeImportProgress.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id); err != nil {
		return nil, err
	}
	seen, err := a.k.DB.Ent.CustomerImport.Query().Where(customerimport.ID(id)).Exist(ctx)
	if err != nil {
		return nil, err
	}
	if !seen {
		return nil, apperr.NotFound("import")
	}
	return a.subscribeEvents(ctx, id, outbox.CustomerImportProgressed)
}
