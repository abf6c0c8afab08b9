package realnode

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRestorePutsBackWhatANodeChanged changes the machine the way a node
// does — a link, an iptables chain with a jump to it, a mount and a
// process under the work directory — and requires that leftovers names
// each and that restore removes them all. It needs root, and changes only
// names of its own.
func TestRestorePutsBackWhatANodeChanged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	for _, bin := range []string{"ip", "iptables", "sleep"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("no %s", bin)
		}
	}
	// restore acts on the whole machine (new iptables chains, the node's
	// cgroup): never beside a running node.
	if len(cgroupDirs(CgroupRoot)) > 0 {
		t.Skip("a real node is running on this machine")
	}
	dir := t.TempDir()
	const link, chain = "inftest0", "INFERNO-UNITTEST"
	h, err := recordHost(dir, link)
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
		}
	}
	run("ip", "link", "add", "name", link, "type", "bridge")
	run("iptables", "-w", "-N", chain)
	run("iptables", "-w", "-A", "FORWARD", "-j", chain)
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
	for _, want := range []string{"link " + link, "chain " + chain, "mount " + mnt, "process "} {
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
