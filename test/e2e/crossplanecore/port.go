package crossplanecore

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// RBACManagerPort is the port Crossplane's RBAC manager binds on every
// interface: controller-runtime's default metrics address, which the RBAC
// manager has no flag to move.
const RBACManagerPort = 8080

// CheckRBACManagerPort fails, naming the process that holds it, when
// RBACManagerPort is taken: the RBAC manager would otherwise exit at start
// with a bind error deep in its log, after the control plane came up.
func CheckRBACManagerPort() error {
	if err := portFree(RBACManagerPort); err != nil {
		return fmt.Errorf("crossplane's rbac manager needs port %d free on every interface (its metrics address is not configurable): %w; it is held by %s: stop it, or run the e2e where the port is free", RBACManagerPort, err, PortHolder(RBACManagerPort))
	}
	return nil
}

func portFree(port int) error {
	l, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
	if err != nil {
		return err
	}
	return l.Close()
}

// PortHolder names the processes listening on TCP port (pid and command
// line), read from /proc: the sockets in LISTEN state of /proc/net/tcp and
// tcp6 on the port, and the processes whose file descriptors are those
// sockets. It says what it could not find rather than fail: it is for an
// error message.
func PortHolder(port int) string {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		for _, inode := range listeningInodes(f, port) {
			inodes[inode] = true
		}
	}
	if len(inodes) == 0 {
		return "no listening socket in /proc/net/tcp{,6} (another network namespace, or not yet listening)"
	}
	var holders []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		fds, _ := os.ReadDir(filepath.Join(p, "fd"))
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(p, "fd", fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				holders = append(holders, fmt.Sprintf("pid %s (%s)", filepath.Base(p), commandLine(p)))
				break
			}
		}
	}
	if len(holders) == 0 {
		return "a socket of no process this user can see"
	}
	return strings.Join(holders, ", ")
}

// listeningInodes are the socket inodes of file (/proc/net/tcp's format)
// in LISTEN state (0A) on port.
func listeningInodes(file string, port int) []string {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" {
			continue
		}
		_, hexPort, ok := strings.Cut(fields[1], ":")
		if p, err := strconv.ParseUint(hexPort, 16, 16); !ok || err != nil || int(p) != port {
			continue
		}
		out = append(out, fields[9])
	}
	return out
}

// commandLine is a process's command line, its NULs as spaces.
func commandLine(proc string) string {
	b, err := os.ReadFile(filepath.Join(proc, "cmdline"))
	if err != nil || len(b) == 0 {
		return "?"
	}
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}
