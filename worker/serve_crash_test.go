package worker_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fideliza/fideliza/internal/crashtest"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// serveRecovery is what issue 15 promises after a process dies: every
// acknowledged sale processed within a minute, with the default settings.
const serveRecovery = time.Minute

// TestServeCrash kills the real fideliza serve (HTTP and workers in one
// process) with SIGKILL twice: while point-of-sale clients are registering
// sales, and while it works through the queue they left. A third serve with
// default settings must then process every sale it acknowledged exactly
// once within serveRecovery of the second kill, and no sale may be stored
// half-written (without its items, payment or job).
func TestServeCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills serve processes; skipped with -short")
	}
	t.Parallel()
	bin := crashtest.Build(t)
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) { serveCrashRun(t, bin, d) })
	}
}

func serveCrashRun(t *testing.T, bin, dialectName string) {
	dbURL := storagetest.URL(t, dialectName, true)
	till := crashtest.NewTill(t, dbURL)
	logDir := t.TempDir()
	serve := func(name string) *crashtest.Process {
		t.Helper()
		addr := crashtest.FreeAddr(t)
		till.SendTo("http://" + addr)
		p := crashtest.Start(t, bin, filepath.Join(logDir, name+".log"), `"msg":"listening"`,
			"serve", "--database-url", dbURL, "--addr", addr, "--rate-limit", "off", "--log-level", "info")
		p.WaitStarted(t, 30*time.Second)
		return p
	}

	// Kill 1: during ingestion, clients still sending.
	p := serve("serve-1")
	stop := till.Load(t, 8)
	time.Sleep(1500 * time.Millisecond) // crash timing: the kill lands during ingestion
	p.Kill(t)
	stop()
	t.Logf("%s: kill 1 during ingestion: %d sales acknowledged", dialectName, till.Count())

	// Kill 2: during processing, the clients done and the queue not yet.
	p = serve("serve-2")
	stop = till.Load(t, 8)
	time.Sleep(1500 * time.Millisecond) // crash timing: the kill lands while the queue is processed
	stop()
	p.Kill(t)
	killed := time.Now()
	st := crashtest.Counts(t, dbURL)
	t.Logf("%s: kill 2 during processing: %d sales acknowledged, %d processed, %d jobs not completed (%d left running)",
		dialectName, till.Count(), st.Processed, st.JobsLeft, st.Running)

	p = serve("serve-3")
	crashtest.WaitProcessed(t, dbURL, killed.Add(serveRecovery), p.Tail)
	t.Logf("%s: every sale processed %v after the kill", dialectName, time.Since(killed).Round(time.Millisecond))
	p.Stop(t)
	till.Verify(t, dbURL)
}
