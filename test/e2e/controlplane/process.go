package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is one binary the test started. Its stdout and stderr go to a log
// file so a failing run can point at it; it runs in its own process group
// and gets SIGKILL if the test process dies, so nothing outlives the test.
type Process struct {
	Name    string
	LogPath string

	cmd    *exec.Cmd
	log    *os.File
	done   chan struct{}
	mu     sync.Mutex
	err    error
	exited bool
}

// StartProcess starts bin with args and extra environment variables, logging
// to <logDir>/<name>.log (appending, so a restarted process keeps one log).
func StartProcess(name, logDir, bin string, args []string, env ...string) (*Process, error) {
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(f, "=== %s %s %s\n", time.Now().Format(time.RFC3339Nano), bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout = f
	cmd.Stderr = f
	// A clean environment: the developer's KUBECONFIG or proxy settings must
	// not leak into the control plane. PATH and HOME stay for tools that
	// need them (the crossplane CLI reads ~/.docker for registry auth).
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, log: f, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err, p.exited = err, true
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// Exited reports whether the process has ended, and with what error.
func (p *Process) Exited() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited, p.err
}

// PID is the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Stop sends SIGTERM to the process group, waits up to grace for it to exit,
// then SIGKILLs the group. It is safe to call more than once.
func (p *Process) Stop(grace time.Duration) {
	if ok, _ := p.Exited(); !ok {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	}
	_ = p.log.Close()
}

// Kill ends the process group at once with SIGKILL, as a crash would.
func (p *Process) Kill() {
	if ok, _ := p.Exited(); !ok {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	_ = p.log.Close()
}

// RunCommand runs a short-lived command to completion, logging to
// <logDir>/<name>.log, and returns an error that quotes the log's tail.
func RunCommand(ctx context.Context, name, logDir, bin string, args []string, env ...string) error {
	return RunCommandIn(ctx, "", name, logDir, bin, args, env...)
}

// RunCommandIn is RunCommand in working directory dir.
func RunCommandIn(ctx context.Context, dir, name, logDir, bin string, args []string, env ...string) error {
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "=== %s %s %s\n", time.Now().Format(time.RFC3339Nano), bin, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s failed: %w\n--- tail of %s ---\n%s", name, err, logPath, Tail(logPath, 30))
	}
	return nil
}

// Tail returns the last n lines of a file, for error messages.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// FreePort asks the kernel for a free TCP port on 127.0.0.1. There is a
// window between closing the listener and the component binding it; ports
// come from the ephemeral range and nothing else here races for them.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreePorts returns n distinct free ports. All listeners stay open until
// every port is chosen so that no two are the same.
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// WaitFor polls check every interval until it returns true, the process
// (if any) exits, or timeout passes. The last error from check is reported.
func WaitFor(ctx context.Context, timeout time.Duration, what string, p *Process, interval time.Duration, check func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ok, err := check(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		if p != nil {
			if exited, perr := p.Exited(); exited {
				return fmt.Errorf("%s: %s exited (%v) before it was ready\n--- tail of %s ---\n%s", what, p.Name, perr, p.LogPath, Tail(p.LogPath, 40))
			}
		}
		select {
		case <-ctx.Done():
			msg := fmt.Sprintf("%s: timed out", what)
			if last != nil {
				msg += ": " + last.Error()
			}
			if p != nil {
				msg += fmt.Sprintf("\n--- tail of %s ---\n%s", p.LogPath, Tail(p.LogPath, 40))
			}
			return errors.New(msg)
		case <-t.C:
		}
	}
}

// CPUSeconds is the user+system CPU time the process has used so far (0 if
// it has exited), read from /proc. Scenarios use it to say which component
// a load test spends the machine's two cores on.
func (p *Process) CPUSeconds() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID()))
	if err != nil {
		return 0
	}
	// The command name (field 2) is parenthesised and may hold spaces;
	// utime and stime are fields 14 and 15, counted after it.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	var utime, stime float64
	fmt.Sscan(fields[11], &utime)
	fmt.Sscan(fields[12], &stime)
	return (utime + stime) / 100 // USER_HZ is 100 on Linux
}
