// Package netns gives the end-to-end test a network namespace of its own
// for programs that bind fixed ports on every interface, and the sockets
// that connect it to the host's loopback.
//
// Crossplane's RBAC manager and provider-kubernetes v1.2.1 both bind
// controller-runtime's default metrics address, :8080, with no flag to move
// it (and provider-kubernetes its webhook server on :9443 too). The main
// control plane's RBAC manager already holds :8080 on the host, so a hub's
// second RBAC manager, and provider-kubernetes, each run inside a
// namespace of their own where those ports are free (one namespace for
// both would only move the clash in there). They reach the host's API servers through
// listeners the test opens inside the namespace (Listen): a socket belongs
// to the namespace it was created in, whichever thread later uses it, so
// the test process serves both sides without a veth pair, a bridge or a
// route, and nothing outside the test can reach in.
package netns

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// NS is a named network namespace (ip netns), its loopback up.
type NS struct {
	Name string
}

// Path is where ip netns keeps the namespace's handle.
func (n *NS) Path() string { return filepath.Join("/var/run/netns", n.Name) }

// Create makes the namespace, deleting a stale one of that name first (a
// killed run's).
func Create(ctx context.Context, name string) (*NS, error) {
	n := &NS{Name: name}
	if _, err := os.Stat(n.Path()); err == nil {
		_ = n.Delete(ctx)
	}
	if out, err := exec.CommandContext(ctx, "ip", "netns", "add", name).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ip netns add %s: %v: %s", name, err, out)
	}
	if out, err := exec.CommandContext(ctx, "ip", "-n", name, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		_ = n.Delete(ctx)
		return nil, fmt.Errorf("loopback up in %s: %v: %s", name, err, out)
	}
	return n, nil
}

// Delete removes the namespace; processes still in it keep it alive until
// they exit.
func (n *NS) Delete(ctx context.Context) error {
	if out, err := exec.CommandContext(ctx, "ip", "netns", "delete", n.Name).CombinedOutput(); err != nil {
		return fmt.Errorf("ip netns delete %s: %v: %s", n.Name, err, out)
	}
	return nil
}

// Command is the command line that runs bin with args inside the
// namespace. ip netns exec execs the program in place, so the pid the
// caller starts is the program's own and its signals reach it.
func (n *NS) Command(bin string, args ...string) (string, []string) {
	// A full path: the control plane's process starter checks the
	// executable exists before it runs it.
	ip, err := exec.LookPath("ip")
	if err != nil {
		ip = "/usr/sbin/ip"
	}
	return ip, append([]string{"netns", "exec", n.Name, bin}, args...)
}

// Listen opens a TCP listener on addr inside the namespace.
func (n *NS) Listen(addr string) (net.Listener, error) {
	var l net.Listener
	err := n.do(func() error {
		var err error
		l, err = net.Listen("tcp", addr)
		return err
	})
	return l, err
}

// DialContext connects from inside the namespace to addr (an
// http.Transport's DialContext).
func (n *NS) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := n.do(func() error {
		var err error
		c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// do runs f on an OS thread switched into the namespace. The thread goes
// back to the host's namespace afterwards; if it cannot, it stays locked
// and the runtime retires it when the goroutine ends, so no other
// goroutine ever runs in the wrong namespace.
func (n *NS) do(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		host, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer host.Close()
		target, err := os.Open(n.Path())
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("setns %s: %w", n.Name, err)
			return
		}
		ferr := f()
		if err := unix.Setns(int(host.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- ferr
			return // still locked: the thread dies with this goroutine
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}
