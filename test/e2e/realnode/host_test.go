package realnode

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRestorePutsBackWhatANodeChanged changes the machine the way a node
// does — a link, an iptables chain with a jump to it, an ipset a rule of
// that chain matches on (as a NetworkPolicy engine's), a mount and a
// process under the work directory — and requires that leftovers names
// each and that restore removes them all. It needs root, and changes only
// names of its own.
func TestRestorePutsBackWhatANodeChanged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	needRoot(t, "ip", "iptables", "ipset", "sleep")
	dir := t.TempDir()
	const link, chain = "inftest0", "INFERNO-UNITTEST"
	h, err := recordHost(dir, link)
	if err != nil {
		t.Fatal(err)
	}
	run := runner(t)
	run("ip", "link", "add", "name", link, "type", "bridge")
	run("iptables", "-w", "-N", chain)
	run("iptables", "-w", "-A", "FORWARD", "-j", chain)
	run("ipset", "create", chain, "hash:ip")
	run("iptables", "-w", "-A", chain, "-m", "set", "--match-set", chain, "src", "-j", "RETURN")
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	// A process whose command line names the work directory, as
	// containerd's shims name their socket.
	p := exec.Command("/bin/sh", "-c", "sleep 60; true", filepath.Join(dir, "shim"))
	p.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL) })
	go func() { _ = p.Wait() }()
	time.Sleep(50 * time.Millisecond)

	left := strings.Join(h.leftovers(), "\n")
	for _, want := range []string{"link " + link, "chain " + chain, "ipset " + chain, "mount " + mnt, "process "} {
		if !strings.Contains(left, want) {
			t.Errorf("leftovers do not name %q:\n%s", want, left)
		}
	}
	if err := h.restore(); err != nil {
		t.Errorf("restore: %v", err)
	}
	if l := h.leftovers(); len(l) > 0 {
		t.Errorf("left after restore:\n%s", strings.Join(l, "\n"))
	}
}

// TestFirewallRestore adds what a NetworkPolicy engine adds — a chain in
// the filter table, jumps to it from INPUT, FORWARD and OUTPUT, and an
// ipset its rule matches on — and requires that Leftovers names the chain
// and the set, and that Restore removes them and the jumps. It needs root,
// and changes only names of its own.
func TestFirewallRestore(t *testing.T) {
	needRoot(t, "iptables", "ipset")
	const chain = "INFERNO-UNITTEST-FW"
	f := RecordFirewall()
	run := runner(t)
	run("iptables", "-w", "-N", chain)
	for _, builtin := range []string{"INPUT", "FORWARD", "OUTPUT"} {
		run("iptables", "-w", "-I", builtin, "1", "-m", "comment", "--comment", "inferno unit test", "-j", chain)
	}
	run("ipset", "create", chain, "hash:ip")
	run("iptables", "-w", "-A", chain, "-m", "set", "--match-set", chain, "dst", "-j", "RETURN")
	want := []string{"ipset " + chain, "iptables -t filter chain " + chain}
	if diff := cmp.Diff(want, f.Leftovers()); diff != "" {
		t.Errorf("Leftovers (-want +got):\n%s", diff)
	}
	if err := f.Restore(); err != nil {
		t.Errorf("Restore: %v", err)
	}
	if l := f.Leftovers(); len(l) > 0 {
		t.Errorf("left after Restore: %v", l)
	}
	out, _ := exec.Command("iptables", "-w", "-S").Output()
	if strings.Contains(string(out), chain) {
		t.Errorf("a rule still names %s:\n%s", chain, out)
	}
}

// needRoot skips a test that changes the machine unless it runs as root
// with the given commands, and beside no real node (restoring acts on the
// whole machine's new chains and sets, and on the node's cgroup): it holds
// the network lock for the test.
func needRoot(t *testing.T, commands ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	for _, bin := range commands {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("no %s", bin)
		}
	}
	lock, err := LockNetwork(context.Background(), 0, nil)
	if err != nil {
		t.Skipf("a real node is running on this network namespace: %v", err)
	}
	t.Cleanup(lock.Unlock)
}

// TestNetworkLock: a second holder waits for the first and times out by
// name; the lock is free again once given back.
func TestNetworkLock(t *testing.T) {
	first, err := LockNetwork(context.Background(), 0, nil)
	if err != nil {
		t.Skipf("a real node is running on this network namespace: %v", err)
	}
	var heard []string
	_, err = LockNetwork(context.Background(), 1500*time.Millisecond, func(f string, a ...any) { heard = append(heard, fmt.Sprintf(f, a...)) })
	if err == nil || !strings.Contains(err.Error(), lockName) {
		t.Errorf("second holder: got %v, want an error naming %s", err, lockName)
	}
	if len(heard) != 1 {
		t.Errorf("the waiter said %d lines, want 1: %q", len(heard), heard)
	}
	first.Unlock()
	first.Unlock()
	again, err := LockNetwork(context.Background(), 0, nil)
	if err != nil {
		t.Fatalf("after Unlock: %v", err)
	}
	again.Unlock()
}

// TestCleanStrangers leaves what a killed node of another checkout leaves
// (its bridge with a veth on it, a KUBE- chain that a built-in chain jumps
// to, a kube-router set) beside a chain and a link of someone else's, and
// requires that cleanStrangers removes the node's and keeps the others.
func TestCleanStrangers(t *testing.T) {
	needRoot(t, "ip", "iptables", "ipset")
	const bridge, veth, peer, link = "inftest1", "vethinftest", "inftestpeer", "inftest2"
	const ours, theirs, set = "KUBE-INFTEST", "INFERNO-UNITTEST-KEEP", "kube-router-inftest"
	run := runner(t)
	t.Cleanup(func() {
		for _, l := range []string{bridge, veth, link} {
			_ = exec.Command("ip", "link", "delete", l).Run()
		}
		_ = dropChains("iptables", "filter", []string{theirs, ours})
		_ = destroyIpsets([]string{set})
	})
	run("ip", "link", "add", "name", bridge, "type", "bridge")
	run("ip", "link", "add", veth, "type", "veth", "peer", "name", peer)
	run("ip", "link", "set", veth, "master", bridge)
	run("ip", "link", "add", "name", link, "type", "bridge")
	run("iptables", "-w", "-N", ours)
	run("iptables", "-w", "-A", "FORWARD", "-j", ours)
	run("iptables", "-w", "-N", theirs)
	run("ipset", "create", set, "hash:ip")

	var heard []string
	if err := cleanStrangers(bridge, func(f string, a ...any) { heard = append(heard, fmt.Sprintf(f, a...)) }); err != nil {
		t.Fatalf("cleanStrangers: %v", err)
	}
	for _, l := range []string{bridge, veth, peer} {
		if linkExists(l) {
			t.Errorf("link %s is still there", l)
		}
	}
	if !linkExists(link) {
		t.Errorf("link %s (not on the bridge) went", link)
	}
	filter := chains("iptables", "filter")
	if slices.Contains(filter, ours) {
		t.Errorf("chain %s is still there", ours)
	}
	if !slices.Contains(filter, theirs) {
		t.Errorf("chain %s (not a node's) went", theirs)
	}
	if slices.Contains(ipsets(), set) {
		t.Errorf("ipset %s is still there", set)
	}
	if len(heard) != 1 || !strings.Contains(heard[0], "link "+bridge) {
		t.Errorf("what it said does not name the bridge: %q", heard)
	}
	if err := cleanStrangers(bridge, nil); err != nil {
		t.Errorf("second call, with no bridge: %v", err)
	}
}

// runner runs a command that must succeed.
func runner(t *testing.T) func(name string, args ...string) {
	return func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
		}
	}
}

// TestRuleFields: a rule with a quoted comment comes back as the arguments
// that delete it (a killed run's rules could not be deleted when the
// comment was split on its spaces).
func TestRuleFields(t *testing.T) {
	for line, want := range map[string][]string{
		`-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD`: {"-A", "FORWARD", "-m", "comment", "--comment", "kubernetes forwarding rules", "-j", "KUBE-FORWARD"},
		`-A INPUT -j KUBE-FIREWALL`: {"-A", "INPUT", "-j", "KUBE-FIREWALL"},
		`-N KUBE-SERVICES`:          {"-N", "KUBE-SERVICES"},
		``:                          nil,
	} {
		if diff := cmp.Diff(want, ruleFields(line)); diff != "" {
			t.Errorf("ruleFields(%q) (-want +got):\n%s", line, diff)
		}
	}
}
