// Package crashtest holds what the tests that run the fideliza binary as
// child processes, and kill them, share: the binary built from the
// checkout, a started process and its log, a till of point-of-sale sales
// sent over HTTP, and the check that every sale was processed exactly once.
// Test code only: it imports testing.
package crashtest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Build builds cmd/fideliza into the test's temporary directory.
func Build(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		require.NotEqual(t, parent, root, "no go.mod above %s", wd)
		root = parent
	}
	bin := filepath.Join(t.TempDir(), "fideliza")
	started := time.Now()
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/fideliza")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	t.Logf("built %s in %v", bin, time.Since(started).Round(time.Millisecond))
	return bin
}

// FreeAddr is a loopback address with a port free at the moment.
func FreeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// Process is a running fideliza process.
type Process struct {
	cmd     *exec.Cmd
	logPath string
	started chan struct{} // closed when it logs its ready line
	exited  chan struct{} // closed when it has exited
	waitErr error
}

// Start starts bin with args, its output written to logPath; the process
// has started when it logs a line holding ready. It is killed when the test
// ends, if it still runs.
func Start(t *testing.T, bin, logPath, ready string, args ...string) *Process {
	t.Helper()
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	cmd.Stdout = logFile
	require.NoError(t, cmd.Start())
	p := &Process{cmd: cmd, logPath: logPath, started: make(chan struct{}), exited: make(chan struct{})}
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
				once.Do(func() { close(p.started) })
			}
		}
	}()
	go func() {
		<-scanned // Wait closes the pipe: read it to the end first
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// WaitStarted waits for the process to log its ready line and returns how
// long that took.
func (p *Process) WaitStarted(t *testing.T, timeout time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	select {
	case <-p.started:
		return time.Since(began)
	case <-p.exited:
		t.Fatalf("%s exited before starting (%v); log:\n%s", p.name(), p.waitErr, p.Tail())
	case <-time.After(timeout):
		t.Fatalf("%s did not start within %v; log:\n%s", p.name(), timeout, p.Tail())
	}
	return 0
}

// WaitExited waits for the process to end by itself and fails the test
// unless it exited with status 0 within timeout.
func (p *Process) WaitExited(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-p.exited:
		require.NoError(t, p.waitErr, "%s; log:\n%s", p.name(), p.Tail())
	case <-time.After(timeout):
		t.Fatalf("%s did not end within %v; log:\n%s", p.name(), timeout, p.Tail())
	}
}

// Kill ends the process with SIGKILL: no deferred function, no River
// shutdown, transactions and connections cut off mid-way.
func (p *Process) Kill(t *testing.T) {
	t.Helper()
	select {
	case <-p.exited:
		t.Fatalf("%s exited by itself (%v); log:\n%s", p.name(), p.waitErr, p.Tail())
	default:
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.exited
}

// Stop ends the process gracefully (SIGTERM), or with SIGKILL when it does
// not stop in time.
func (p *Process) Stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		t.Errorf("%s did not stop within 20 s of SIGTERM; log:\n%s", p.name(), p.Tail())
	}
}

// Tail is the end of the process's log, for failure messages: the log
// file goes with the test's temporary directory.
func (p *Process) Tail() string {
	data, _ := os.ReadFile(p.logPath)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

// name is the process's log file's name, which the tests give its role.
func (p *Process) name() string { return strings.TrimSuffix(filepath.Base(p.logPath), ".log") }

// ErrorLines returns up to n lines at level ERROR of the log at path.
func ErrorLines(path string, n int) []string {
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
