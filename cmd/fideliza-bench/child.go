package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// startChild runs this binary as role on a free loopback port and waits
// until it answers. It returns the address, a stop function and the child
// (its peak resident memory, its CPU time).
func startChild(ctx context.Context, role string, env []string) (string, func(), *child, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	self, err := os.Executable()
	if err != nil {
		return "", nil, nil, err
	}
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(append(os.Environ(), roleEnv+"="+role, "FIDELIZA_ADDR="+addr), env...)
	logFile, err := os.CreateTemp("", "fideliza-bench-"+role+"-*.log")
	if err != nil {
		return "", nil, nil, err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return "", nil, nil, err
	}
	fmt.Fprintf(os.Stderr, "         %s child logs to %s\n", role, logFile.Name())
	var peak atomic.Int64
	sample, stopSampling := context.WithCancel(ctx)
	go func() { // VmHWM is the peak, but read VmRSS too in case the kernel lacks it
		for sample.Err() == nil {
			if kb := procStatus(cmd.Process.Pid, "VmRSS:"); kb*1024 > peak.Load() {
				peak.Store(kb * 1024)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	ch := &child{pid: cmd.Process.Pid, peak: &peak}
	stop := func() {
		stopSampling()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
		}
		logFile.Close()
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return addr, stop, ch, nil
			}
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, nil, fmt.Errorf("%s child did not answer within a minute", role)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// child is a child process of the run.
type child struct {
	pid  int
	peak *atomic.Int64 // sampled VmRSS
}

// rss is the child's peak resident memory in bytes.
func (c *child) rss() int64 { return max(c.peak.Load(), procStatus(c.pid, "VmHWM:")*1024) }

// cpu is the user and system CPU time the child has used so far
// (/proc/<pid>/stat, in the kernel's USER_HZ ticks of 10 ms).
func (c *child) cpu() time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.pid))
	if err != nil {
		return 0
	}
	_, after, _ := strings.Cut(string(raw), ") ") // the command's name may hold spaces
	fields := strings.Fields(after)
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64) // fields 14 and 15 of the line
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// measured runs measure and sets its result's CPU per request: the child's
// CPU time over it divided by its requests.
func (c *child) measured(measure func() result) result {
	before := c.cpu()
	r := measure()
	if r.Requests > 0 {
		r.CPUPerRequest = (c.cpu() - before) / time.Duration(r.Requests)
	}
	return r
}

// procStatus reads a kB figure of /proc/<pid>/status (0 when unknown).
func procStatus(pid int, field string) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
