package mcptest

import (
	"io"
	"net"
	"net/url"
	"sync"
)

// Port forwards TCP connections from a port of its own on 127.0.0.1 to a
// target address: [Port.Down] closes the port (a connection to it is
// refused) and every connection through it, [Port.Up] listens on the same
// port again. The server behind it, and its sessions, live on meanwhile: a
// server that goes away and comes back, as a process restarting or a
// network outage shows it to a client. Its methods are safe for concurrent
// use.
type Port struct {
	addr   string
	target string

	mu    sync.Mutex
	ln    net.Listener // nil while down
	conns map[net.Conn]struct{}
	dials int
	wg    sync.WaitGroup
}

// NewPort listens on a free port of 127.0.0.1 and forwards every
// connection to target (host:port) until Down. Call Down when done: it
// waits for the forwarding goroutines to end.
func NewPort(target string) (*Port, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Port{addr: ln.Addr().String(), target: target, conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	return p, nil
}

// Addr is the port's address, host:port.
func (p *Port) Addr() string { return p.addr }

// URL is srvURL with its host replaced by the port's; srvURL unchanged when
// it does not parse.
func (p *Port) URL(srvURL string) string {
	u, err := url.Parse(srvURL)
	if err != nil {
		return srvURL
	}
	u.Host = p.addr
	return u.String()
}

// Dials counts the connections forwarded so far.
func (p *Port) Dials() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dials
}

func (p *Port) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				_ = c.Close()
				continue
			}
			if !p.track(c, s) {
				return
			}
			for _, pair := range [][2]net.Conn{{c, s}, {s, c}} {
				p.wg.Go(func() {
					_, _ = io.Copy(pair[0], pair[1])
					_ = pair[0].Close()
					_ = pair[1].Close()
				})
			}
		}
	})
}

// track registers a forwarded pair; false (both closed) once Down began.
func (p *Port) track(c, s net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		_, _ = c.Close(), s.Close()
		return false
	}
	p.conns[c], p.conns[s] = struct{}{}, struct{}{}
	p.dials++
	return true
}

// Down closes the port and every connection through it, and waits for the
// forwarding to end. It is idempotent.
func (p *Port) Down() {
	p.mu.Lock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
	p.mu.Unlock()
	p.wg.Wait()
}

// Up listens on the port again; an error when the port was taken
// meanwhile, or it is up.
func (p *Port) Up() error {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.serve(ln)
	return nil
}
