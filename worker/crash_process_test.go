package worker_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// crashWorker is a running fideliza worker process.
type crashWorker struct {
	cmd     *exec.Cmd
	logPath string
	started chan struct{} // closed when it logs "worker started"
	exited  chan struct{} // closed when it has exited
	waitErr error
}

// crashStart starts fideliza worker on dbURL, rescuing after crashRescueAfter.
func crashStart(t *testing.T, bin, dbURL, logPath string) *crashWorker {
	t.Helper()
	return crashStartProcess(t, bin, logPath, `"msg":"worker started"`, "worker", "--database-url", dbURL,
		"--rescue-after", crashRescueAfter.String(), "--workers", "8", "--log-level", "info")
}

// crashStartProcess starts bin with args; the process has started when it
// logs a line holding ready.
func crashStartProcess(t *testing.T, bin, logPath, ready string, args ...string) *crashWorker {
	t.Helper()
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	cmd.Stdout = logFile
	require.NoError(t, cmd.Start())
	w := &crashWorker{cmd: cmd, logPath: logPath, started: make(chan struct{}), exited: make(chan struct{})}
	var once sync.Once
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logFile, line)
			if strings.Contains(line, ready) {
				once.Do(func() { close(w.started) })
			}
		}
	}()
	go func() {
		<-scanned // Wait closes the pipe: read it to the end first
		w.waitErr = cmd.Wait()
		logFile.Close()
		close(w.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-w.exited:
		default:
			_ = cmd.Process.Kill()
			<-w.exited
		}
	})
	return w
}

// waitStarted waits for the process to start working and returns how long
// that took.
func (w *crashWorker) waitStarted(t *testing.T, timeout time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	select {
	case <-w.started:
		return time.Since(began)
	case <-w.exited:
		t.Fatalf("worker exited before starting (%v); log:\n%s", w.waitErr, w.tail())
	case <-time.After(timeout):
		t.Fatalf("worker did not start within %v; log:\n%s", timeout, w.tail())
	}
	return 0
}

// kill ends the process with SIGKILL: no deferred function, no River
// shutdown, transactions cut off mid-way.
func (w *crashWorker) kill(t *testing.T) {
	t.Helper()
	select {
	case <-w.exited:
		t.Fatalf("worker exited by itself (%v); log:\n%s", w.waitErr, w.tail())
	default:
	}
	require.NoError(t, w.cmd.Process.Signal(syscall.SIGKILL))
	<-w.exited
}

// stop ends the process gracefully (SIGTERM), or with SIGKILL when it does
// not stop in time.
func (w *crashWorker) stop(t *testing.T) {
	t.Helper()
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.exited:
	case <-time.After(20 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.exited
		t.Errorf("worker did not stop within 20 s of SIGTERM; log:\n%s", w.tail())
	}
}

// tail is the end of the process's log, for failure messages: the log
// file goes with the test's temporary directory.
func (w *crashWorker) tail() string {
	data, _ := os.ReadFile(w.logPath)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

// crashErrorLines returns up to n log lines at level ERROR.
func crashErrorLines(path string, n int) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	total := 0
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			total++
			if len(out) < n {
				out = append(out, line)
			}
		}
	}
	if total > len(out) {
		out = append(out, fmt.Sprintf("… %d ERROR lines in all", total))
	}
	return out
}
