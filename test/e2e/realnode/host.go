package realnode

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A real node changes the machine it runs on: sysctls, iptables chains,
// ipsets, network namespaces, a bridge, mounts, cgroups, a few fixed
// directories.
// hostState records those before the node starts, so that teardown puts
// them back and reports whatever it could not, and so that a run killed
// half way is cleaned up by the next one (the record is a file in the work
// directory).

// sysctlsTouched are the sysctls the kubelet, the bridge plugin and
// kube-proxy set.
var sysctlsTouched = []string{
	"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops",
	"net/ipv4/ip_forward", "net/ipv4/conf/all/route_localnet",
	"net/bridge/bridge-nf-call-iptables", "net/bridge/bridge-nf-call-ip6tables",
}

// fixedPaths are paths the node's programs write whatever they are told:
// the device plugin socket directory, CNI's result cache, the netns
// directory, the kubelet's symlinks to container logs, the shims' sockets.
var fixedPaths = []string{
	"/var/lib/kubelet", "/var/lib/cni", "/var/run/netns", "/var/log/containers",
	"/var/log/pods", "/run/containerd", "/opt/cni", "/etc/cni",
}

// iptablesTables are the tables whose chains are compared.
var iptablesTables = []string{"filter", "nat", "mangle"}

// hostState is the machine as it was before the node started.
type hostState struct {
	WorkDir string            `json:"workDir"`
	Bridge  string            `json:"bridge"`
	Sysctls map[string]string `json:"sysctls"`
	Netns   []string          `json:"netns"`
	Links   []string          `json:"links"`
	// Chains maps "iptables/nat" and the like to its chains.
	Chains    map[string][]string `json:"chains"`
	NftTables []string            `json:"nftTables"`
	// Ipsets are the names of the ipsets (a NetworkPolicy engine such as
	// kube-router's keeps its pod and namespace sets in them).
	Ipsets []string `json:"ipsets"`
	// Existed says which fixed paths existed; entries inside those that
	// did are compared one by one (Entries).
	Existed map[string]bool     `json:"existed"`
	Entries map[string][]string `json:"entries"`
}

func recordHost(workDir, bridge string) (*hostState, error) {
	h := &hostState{WorkDir: workDir, Bridge: bridge, Sysctls: map[string]string{}, Chains: map[string][]string{},
		Existed: map[string]bool{}, Entries: map[string][]string{}}
	for _, s := range sysctlsTouched {
		if b, err := os.ReadFile("/proc/sys/" + s); err == nil {
			h.Sysctls[s] = strings.TrimSpace(string(b))
		}
	}
	h.Netns = dirEntries("/var/run/netns")
	h.Links = links()
	for _, bin := range []string{"iptables", "ip6tables"} {
		for _, t := range iptablesTables {
			h.Chains[bin+"/"+t] = chains(bin, t)
		}
	}
	h.NftTables = nftTables()
	h.Ipsets = ipsets()
	for _, p := range fixedPaths {
		_, err := os.Lstat(p)
		h.Existed[p] = err == nil
		if err == nil {
			h.Entries[p] = dirEntries(p)
		}
	}
	return h, nil
}

func (h *hostState) save(path string) error {
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func loadHost(path string) (*hostState, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	h := &hostState{}
	return h, json.Unmarshal(b, h)
}

// restore undoes what the node did to the machine, in dependency order:
// processes (they hold mounts and namespaces), mounts, network namespaces,
// links, iptables and nftables, ipsets (after the rules that match on
// them), cgroups, fixed paths, sysctls. It keeps going past errors and
// returns them all.
func (h *hostState) restore() error {
	var errs []error
	// Without a work directory (a stranger's node, see cleanStrangers)
	// there are no processes or mounts to find by path: an empty prefix
	// would match them all.
	if h.WorkDir != "" {
		killUnder(h.WorkDir)
	}
	killCgroup(CgroupRoot)
	if h.WorkDir != "" {
		errs = append(errs, unmountUnder(h.WorkDir)...)
	}
	for _, ns := range newOnly(dirEntries("/var/run/netns"), h.Netns) {
		p := filepath.Join("/var/run/netns", ns)
		_ = syscall.Unmount(p, syscall.MNT_DETACH)
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	for _, l := range newOnly(links(), h.Links) {
		if l == h.Bridge || strings.HasPrefix(l, "veth") {
			// A veth goes by itself when its peer's namespace does, maybe
			// between the listing and now: only a link still there is an
			// error.
			if out, err := exec.Command("ip", "link", "delete", l).CombinedOutput(); err != nil && linkExists(l) {
				errs = append(errs, fmt.Errorf("ip link delete %s: %v: %s", l, err, out))
			}
		}
	}
	for key, before := range h.Chains {
		bin, table, _ := strings.Cut(key, "/")
		errs = append(errs, dropChains(bin, table, newOnly(chains(bin, table), before))...)
	}
	for _, t := range newOnly(nftTables(), h.NftTables) {
		if out, err := exec.Command("nft", append([]string{"delete", "table"}, strings.Fields(t)...)...).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("nft delete table %s: %v: %s", t, err, out))
		}
	}
	errs = append(errs, destroyIpsets(newOnly(ipsets(), h.Ipsets))...)
	errs = append(errs, removeCgroups(CgroupRoot)...)
	for _, p := range fixedPaths {
		if !h.Existed[p] {
			if err := os.RemoveAll(p); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		for _, e := range newOnly(dirEntries(p), h.Entries[p]) {
			_ = os.RemoveAll(filepath.Join(p, e))
		}
	}
	for s, v := range h.Sysctls {
		cur, err := os.ReadFile("/proc/sys/" + s)
		if err == nil && strings.TrimSpace(string(cur)) != v {
			if err := os.WriteFile("/proc/sys/"+s, []byte(v), 0o644); err != nil {
				errs = append(errs, fmt.Errorf("restore sysctl %s=%s: %w", s, v, err))
			}
		}
	}
	return errors.Join(errs...)
}

// leftovers lists what differs from the record: what restore could not put
// back. Empty means the machine is as it was.
func (h *hostState) leftovers() []string {
	var out []string
	if h.WorkDir != "" {
		for _, p := range processesUnder(h.WorkDir) {
			out = append(out, "process "+p)
		}
	}
	if pids := cgroupPIDs(CgroupRoot); len(pids) > 0 {
		out = append(out, fmt.Sprintf("processes in cgroup %s: %v", CgroupRoot, pids))
	}
	if h.WorkDir != "" {
		for _, m := range mountsUnder(h.WorkDir) {
			out = append(out, "mount "+m)
		}
	}
	for _, ns := range newOnly(dirEntries("/var/run/netns"), h.Netns) {
		out = append(out, "network namespace "+ns)
	}
	for _, l := range newOnly(links(), h.Links) {
		out = append(out, "link "+l)
	}
	for key, before := range h.Chains {
		bin, table, _ := strings.Cut(key, "/")
		for _, c := range newOnly(chains(bin, table), before) {
			out = append(out, fmt.Sprintf("%s -t %s chain %s", bin, table, c))
		}
	}
	for _, t := range newOnly(nftTables(), h.NftTables) {
		out = append(out, "nftables table "+t)
	}
	for _, s := range newOnly(ipsets(), h.Ipsets) {
		out = append(out, "ipset "+s)
	}
	for _, d := range cgroupDirs(CgroupRoot) {
		out = append(out, "cgroup "+d)
	}
	for _, p := range fixedPaths {
		if _, err := os.Lstat(p); err == nil && !h.Existed[p] {
			out = append(out, "path "+p)
		} else if h.Existed[p] {
			for _, e := range newOnly(dirEntries(p), h.Entries[p]) {
				out = append(out, "path "+filepath.Join(p, e))
			}
		}
	}
	for s, v := range h.Sysctls {
		if cur, err := os.ReadFile("/proc/sys/" + s); err == nil && strings.TrimSpace(string(cur)) != v {
			out = append(out, fmt.Sprintf("sysctl %s=%s (was %s)", s, strings.TrimSpace(string(cur)), v))
		}
	}
	sort.Strings(out)
	return out
}

func dirEntries(dir string) []string {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func links() []string {
	es, _ := os.ReadDir("/sys/class/net")
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func linkExists(name string) bool {
	_, err := os.Lstat(filepath.Join("/sys/class/net", name))
	return err == nil
}

// chains lists a table's chains, built-in ones included.
func chains(bin, table string) []string {
	out, err := exec.Command(bin, "-w", "-t", table, "-S").Output()
	if err != nil {
		return nil
	}
	var cs []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && (f[0] == "-N" || f[0] == "-P") {
			cs = append(cs, f[1])
		}
	}
	return cs
}

// dropChains deletes the rules that jump to the given chains, then the
// chains themselves.
func dropChains(bin, table string, drop []string) []error {
	if len(drop) == 0 {
		return nil
	}
	gone := map[string]bool{}
	for _, c := range drop {
		gone[c] = true
	}
	var errs []error
	out, _ := exec.Command(bin, "-w", "-t", table, "-S").Output()
	for _, line := range strings.Split(string(out), "\n") {
		f := ruleFields(line)
		if len(f) < 2 || f[0] != "-A" || gone[f[1]] {
			continue
		}
		for i := range f {
			if (f[i] == "-j" || f[i] == "-g") && i+1 < len(f) && gone[f[i+1]] {
				args := append([]string{"-w", "-t", table, "-D"}, f[1:]...)
				if b, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
					errs = append(errs, fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, b))
				}
				break
			}
		}
	}
	for _, c := range drop {
		_ = exec.Command(bin, "-w", "-t", table, "-F", c).Run()
	}
	for _, c := range drop {
		if b, err := exec.Command(bin, "-w", "-t", table, "-X", c).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("%s -t %s -X %s: %v: %s", bin, table, c, err, b))
		}
	}
	return errs
}

// nftTables lists nftables tables as "family name".
func nftTables() []string {
	out, err := exec.Command("nft", "list", "tables").Output()
	if err != nil {
		return nil
	}
	var ts []string
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "table "); ok {
			ts = append(ts, rest)
		}
	}
	return ts
}

// ipsets lists the host's ipsets by name; none where the ipset tool is
// missing (then nothing can have made one).
func ipsets() []string {
	out, err := exec.Command("ipset", "list", "-n").Output()
	if err != nil {
		return nil
	}
	return strings.Fields(string(out))
}

// destroyIpsets destroys the named ipsets. A set that another set lists
// (list:set) cannot go before it, so it tries again while any went.
func destroyIpsets(names []string) []error {
	for len(names) > 0 {
		var left []string
		var errs []error
		for _, s := range names {
			if out, err := exec.Command("ipset", "destroy", s).CombinedOutput(); err != nil {
				left = append(left, s)
				errs = append(errs, fmt.Errorf("ipset destroy %s: %v: %s", s, err, strings.TrimSpace(string(out))))
			}
		}
		if len(left) == len(names) {
			return errs
		}
		names = left
	}
	return nil
}

// newOnly is what now has that before did not.
func newOnly(now, before []string) []string {
	had := map[string]bool{}
	for _, b := range before {
		had[b] = true
	}
	var out []string
	for _, n := range now {
		if !had[n] {
			out = append(out, n)
		}
	}
	return out
}

// processesUnder lists processes whose command line names a path under dir:
// containerd, its shims (their -address is the private socket), the
// kubelet and kube-proxy.
func processesUnder(dir string) []string {
	if dir == "" {
		return nil
	}
	var out []string
	self := os.Getpid()
	es, _ := os.ReadDir("/proc")
	for _, e := range es {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		cmd := strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
		if strings.Contains(cmd, dir+"/") {
			out = append(out, fmt.Sprintf("%d %s", pid, cmd))
		}
	}
	return out
}

func killUnder(dir string) {
	for i := 0; i < 20; i++ {
		ps := processesUnder(dir)
		if len(ps) == 0 {
			return
		}
		for _, p := range ps {
			pid, _ := strconv.Atoi(strings.Fields(p)[0])
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// mountInfo lists mount points, deepest last, from /proc/self/mountinfo.
func mountPoints() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 4 {
			out = append(out, unescapeMount(f[4]))
		}
	}
	return out
}

func unescapeMount(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}

func mountsUnder(dir string) []string {
	if dir == "" {
		return nil
	}
	var out []string
	for _, m := range mountPoints() {
		if m == dir || strings.HasPrefix(m, dir+"/") {
			out = append(out, m)
		}
	}
	return out
}

// unmountUnder detaches every mount under dir, deepest first, until none
// is left (a bind mount of the kubelet's root can stack several deep).
func unmountUnder(dir string) []error {
	for round := 0; round < 10; round++ {
		ms := mountsUnder(dir)
		if len(ms) == 0 {
			return nil
		}
		sort.Slice(ms, func(i, j int) bool { return len(ms[i]) > len(ms[j]) })
		for _, m := range ms {
			_ = syscall.Unmount(m, syscall.MNT_DETACH)
		}
	}
	var errs []error
	for _, m := range mountsUnder(dir) {
		errs = append(errs, fmt.Errorf("still mounted: %s", m))
	}
	return errs
}

// cgroupDirs lists the node's cgroup directories in every hierarchy,
// deepest first.
func cgroupDirs(root string) []string {
	var out []string
	hs, _ := os.ReadDir("/sys/fs/cgroup")
	for _, h := range hs {
		base := filepath.Join("/sys/fs/cgroup", h.Name(), root)
		_ = filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				out = append(out, p)
			}
			return nil
		})
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func cgroupPIDs(root string) []int {
	seen := map[int]bool{}
	var out []int
	for _, d := range cgroupDirs(root) {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
				seen[pid] = true
				out = append(out, pid)
			}
		}
	}
	sort.Ints(out)
	return out
}

// killCgroup kills every process of the node's pods: containers outlive
// their shim, so stopping containerd is not enough.
func killCgroup(root string) {
	for i := 0; i < 20; i++ {
		pids := cgroupPIDs(root)
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func removeCgroups(root string) []error {
	var errs []error
	for _, d := range cgroupDirs(root) {
		if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("rmdir %s: %w", d, err))
		}
	}
	return errs
}

// makeCgroups creates the node's cgroup root in every v1 hierarchy: the
// kubelet refuses a cgroupRoot that does not exist.
func makeCgroups(root string) error {
	hs, err := os.ReadDir("/sys/fs/cgroup")
	if err != nil {
		return err
	}
	for _, h := range hs {
		base := filepath.Join("/sys/fs/cgroup", h.Name())
		if fi, err := os.Stat(base); err != nil || !fi.IsDir() {
			continue
		}
		dir := filepath.Join(base, root)
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			return fmt.Errorf("cgroup %s: %w", h.Name(), err)
		}
		// A new v1 cpuset cgroup has no CPUs or memory nodes, and no
		// process can join it (or a child) until it has: inherit the
		// parent's.
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if b, err := os.ReadFile(filepath.Join(base, f)); err == nil {
				_ = os.WriteFile(filepath.Join(dir, f), b, 0o644)
			}
		}
	}
	return nil
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// ruleFields splits a rule as `iptables -S` prints it into the arguments
// that delete it: fields split on spaces, except inside the double quotes
// that iptables puts around a comment with spaces ("kubernetes service
// portals"), which come back as one argument without the quotes.
func ruleFields(line string) []string {
	var f []string
	var cur strings.Builder
	quoted, in := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				f = append(f, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		f = append(f, cur.String())
	}
	return f
}
