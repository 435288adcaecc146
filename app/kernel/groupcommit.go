package kernel

import (
	"sync"
	"time"
)

// GroupTimeout bounds the time a group's transaction may take.
const GroupTimeout = 30 * time.Second

// GroupCommit queues writes by tenant so that the writes of one tenant that
// arrive while its previous group is being written are written together in
// the next transaction, each request answered only once that transaction
// committed. Under load a group holds many writes; a lone write is a group
// of one, written at once. Its zero value is ready.
type GroupCommit[W any] struct {
	mu      sync.Mutex
	waiting map[string][]W
	writing map[string]bool
}

// Add queues w in its tenant's next group; when no group of the tenant is
// being written, a goroutine starts writing with write, up to limit writes a
// group, until none is waiting. write answers each write of its group.
func (g *GroupCommit[W]) Add(tenantID string, w W, limit int, write func(group []W)) {
	g.mu.Lock()
	if g.waiting == nil {
		g.waiting, g.writing = map[string][]W{}, map[string]bool{}
	}
	g.waiting[tenantID] = append(g.waiting[tenantID], w)
	lead := !g.writing[tenantID]
	g.writing[tenantID] = true
	g.mu.Unlock()
	if lead {
		go g.drain(tenantID, limit, write)
	}
}

func (g *GroupCommit[W]) drain(tenantID string, limit int, write func(group []W)) {
	for {
		g.mu.Lock()
		group := g.waiting[tenantID]
		if len(group) > limit {
			group, g.waiting[tenantID] = group[:limit], group[limit:]
		} else {
			delete(g.waiting, tenantID)
		}
		if len(group) == 0 {
			delete(g.writing, tenantID)
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		write(group)
	}
}
