package netns

import (
	"context"
	"io"
	"net"
	"sync"
	"time"
)

// Proxy copies every TCP connection it accepts to a target, byte for byte
// (TLS passes through untouched). Cut closes the listener and every open
// connection, so from the client's side the target is gone: new
// connections are refused and open ones end. Restore listens again on the
// same address.
type Proxy struct {
	Addr   string
	listen func(addr string) (net.Listener, error)
	dial   func(ctx context.Context) (net.Conn, error)

	mu    sync.Mutex
	l     net.Listener
	conns map[net.Conn]struct{}
	cut   bool
}

// ProxyIn listens on addr inside the namespace and connects to target on
// the host: a program in the namespace reaches a host's loopback service
// at the address it would use on the host.
func (n *NS) ProxyIn(addr, target string) (*Proxy, error) {
	return startProxy(addr,
		n.Listen,
		func(ctx context.Context) (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, "tcp", target) })
}

// ProxyOut listens on addr on the host and connects to target inside the
// namespace: the host's API server reaches a webhook served in it.
func (n *NS) ProxyOut(addr, target string) (*Proxy, error) {
	return startProxy(addr,
		func(addr string) (net.Listener, error) { return net.Listen("tcp", addr) },
		func(ctx context.Context) (net.Conn, error) { return n.DialContext(ctx, "tcp", target) })
}

func startProxy(addr string, listen func(string) (net.Listener, error), dial func(context.Context) (net.Conn, error)) (*Proxy, error) {
	p := &Proxy{listen: listen, dial: dial, conns: map[net.Conn]struct{}{}}
	l, err := listen(addr)
	if err != nil {
		return nil, err
	}
	p.Addr = l.Addr().String()
	p.l = l
	go p.serve(l)
	return p, nil
}

func (p *Proxy) serve(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go p.pipe(c)
	}
}

func (p *Proxy) pipe(in net.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	out, err := p.dial(ctx)
	cancel()
	if err != nil {
		_ = in.Close()
		return
	}
	if !p.track(in, out) {
		_ = in.Close()
		_ = out.Close()
		return
	}
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go cp(out, in)
	go cp(in, out)
	<-done
	_ = in.Close()
	_ = out.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, in)
	delete(p.conns, out)
	p.mu.Unlock()
}

// track records an open pair, or refuses it when the proxy has been cut
// meanwhile (a connection accepted just before Cut).
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

// Cut stops the path: the listener closes, every open connection ends.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	if p.l != nil {
		_ = p.l.Close()
		p.l = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = map[net.Conn]struct{}{}
}

// Restore opens the path again on the same address.
func (p *Proxy) Restore() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.cut {
		return nil
	}
	// The address it had, not the one asked for: a port of 0 would
	// otherwise come back as another.
	l, err := p.listen(p.Addr)
	if err != nil {
		return err
	}
	p.l, p.cut = l, false
	go p.serve(l)
	return nil
}

// Close cuts the path for good.
func (p *Proxy) Close() { p.Cut() }
