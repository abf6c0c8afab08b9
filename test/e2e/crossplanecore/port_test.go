package crossplanecore

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPortHolder: a port this test listens on is named with this
// process's pid and command line; a free one with no socket.
func TestPortHolder(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	got := PortHolder(port)
	if want := "pid " + strconv.Itoa(os.Getpid()) + " ("; !strings.Contains(got, want) || !strings.Contains(got, os.Args[0]) {
		t.Errorf("PortHolder(%d) = %q, want it to name %s… %s", port, got, want, os.Args[0])
	}
	if err := portFree(port); err == nil {
		t.Errorf("port %d reads free while this test listens on it", port)
	}
	l.Close()
	if got := PortHolder(port); !strings.HasPrefix(got, "no listening socket") {
		t.Errorf("PortHolder(%d) after close = %q, want no listening socket", port, got)
	}
}
