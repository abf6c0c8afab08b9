package netns

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestProxyCutRestore: a port taken on the host is free inside the
// namespace; a host service is reached from inside through ProxyIn; Cut
// refuses new connections and ends open ones; Restore opens the same
// address again; and a listener inside is reached from the host through
// ProxyOut.
func TestProxyCutRestore(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (ip netns)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip (iproute2)")
	}
	ctx := context.Background()
	n, err := Create(ctx, fmt.Sprintf("inferno-netns-test-%d", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Delete(ctx)

	echo := func(l net.Listener) {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	go echo(host)
	// The host's own port is free inside: the namespace's loopback is its own.
	inside, err := n.Listen(host.Addr().String())
	if err != nil {
		t.Fatalf("the host's port %s inside the namespace: %v", host.Addr(), err)
	}
	inside.Close()

	p, err := n.ProxyIn(host.Addr().String(), host.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	roundTrip := func() error {
		c, err := n.DialContext(ctx, "tcp", p.Addr)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		b := make([]byte, 4)
		if _, err := io.ReadFull(c, b); err != nil {
			return err
		}
		if string(b) != "ping" {
			return fmt.Errorf("echo %q", b)
		}
		return nil
	}
	if err := roundTrip(); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	open, err := n.DialContext(ctx, "tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	time.Sleep(100 * time.Millisecond)
	p.Cut()
	if err := roundTrip(); err == nil {
		t.Error("a connection went through a cut proxy")
	}
	_ = open.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := open.Read(make([]byte, 1)); err == nil {
		t.Error("a connection open before the cut still reads")
	}
	if err := p.Restore(); err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(); err != nil {
		t.Fatalf("after Restore: %v", err)
	}

	in, err := n.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	go echo(in)
	out, err := n.ProxyOut("127.0.0.1:0", in.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	c, err := net.Dial("tcp", out.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	if _, err := io.ReadFull(c, b); err != nil || string(b) != "pong" {
		t.Fatalf("host → namespace: %q %v", b, err)
	}
}
