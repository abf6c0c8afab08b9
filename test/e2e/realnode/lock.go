package realnode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A node's bridge, routes, iptables chains and ipsets live in the host's
// network namespace, which other checkouts of the repository may share
// without sharing its files: CI's runs on this machine see its links but
// not its work directories or /run. So the lock that keeps two nodes apart
// is an abstract unix socket, whose names are per network namespace — the
// very scope of what the nodes would fight over — and which the kernel
// releases when its holder dies, however it dies. A file lock or a record
// in the work directory would be seen by one checkout only.
const lockName = "@inferno-e2e-real-node"

// DefaultLockWait is how long a node waits for another run's node on the
// same network namespace to stop before giving up.
const DefaultLockWait = 15 * time.Minute

// NetworkLock is held while a node (or a test of the host's state) may
// change the host's network namespace.
type NetworkLock struct{ l net.Listener }

// LockNetwork takes the lock, waiting up to wait for a live holder; logf
// (may be nil) hears once that it waits.
func LockNetwork(ctx context.Context, wait time.Duration, logf func(string, ...any)) (*NetworkLock, error) {
	deadline := time.Now().Add(wait)
	said := false
	for {
		l, err := net.Listen("unix", lockName)
		if err == nil {
			return &NetworkLock{l: l}, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("taking the real node's lock (abstract socket %s): %w", lockName, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("another run's real node holds this network namespace (abstract socket %s, see `ss -xlp | grep inferno`) after waiting %s; stop that run or wait for it", lockName, wait)
		}
		if !said && logf != nil {
			logf("realnode: another run's real node holds this network namespace (abstract socket %s); waiting up to %s", lockName, wait)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// Unlock releases the lock. Safe on nil and twice.
func (l *NetworkLock) Unlock() {
	if l != nil && l.l != nil {
		_ = l.l.Close()
		l.l = nil
	}
}

// Kernel-level names a node makes whatever it is told, by their makers:
// kube-proxy's and the CNI plugins' chains, kube-router's chains and sets.
var (
	strangerChainPrefixes = []string{"KUBE-", "CNI-"}
	strangerIpsetPrefixes = []string{"KUBE-", "kube-router-", "inet6:KUBE-", "inet6:kube-router-"}
)

// cleanStrangers removes what a node of another checkout left in this
// network namespace when it was killed: its bridge (with the veths on it
// and the routes through it) and the chains and sets its programs made.
// There is no record of the host before that node (the record is in the
// other checkout's work directory), so what goes is chosen by name, and
// only while the lock is held: then no live node owns those names. It does
// nothing if the bridge is absent.
func cleanStrangers(bridge string, logf func(string, ...any)) error {
	if !linkExists(bridge) {
		return nil
	}
	h := &hostState{Bridge: bridge, Sysctls: map[string]string{}, Chains: map[string][]string{},
		Existed: map[string]bool{}, Entries: map[string][]string{}}
	for _, l := range links() {
		if l != bridge && !(strings.HasPrefix(l, "veth") && masterOf(l) == bridge) {
			h.Links = append(h.Links, l)
		}
	}
	for _, bin := range []string{"iptables", "ip6tables"} {
		for _, t := range iptablesTables {
			h.Chains[bin+"/"+t] = withoutPrefixes(chains(bin, t), strangerChainPrefixes)
		}
	}
	h.NftTables = nftTables()
	h.Ipsets = withoutPrefixes(ipsets(), strangerIpsetPrefixes)
	h.Netns = dirEntries("/var/run/netns")
	for _, p := range fixedPaths {
		h.Existed[p] = true
		h.Entries[p] = dirEntries(p)
	}
	gone := h.leftovers()
	if logf != nil {
		logf("realnode: a killed run's node (no record here) left %d things in this network namespace; removing them:\n  %s", len(gone), strings.Join(gone, "\n  "))
	}
	err := h.restore()
	if l := h.leftovers(); len(l) > 0 {
		return errors.Join(err, fmt.Errorf("a killed run's node left, and cleaning did not remove:\n  %s", strings.Join(l, "\n  ")))
	}
	return err
}

// masterOf is the bridge a link is enslaved to, or "".
func masterOf(link string) string {
	p, err := os.Readlink(filepath.Join("/sys/class/net", link, "master"))
	if err != nil {
		return ""
	}
	return filepath.Base(p)
}

func withoutPrefixes(names, prefixes []string) []string {
	var out []string
	for _, n := range names {
		keep := true
		for _, p := range prefixes {
			if strings.HasPrefix(n, p) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, n)
		}
	}
	return out
}
