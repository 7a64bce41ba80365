package maintain

import (
	"net"
	"net/netip"
	"sync"
	"time"

	// golang.org/x/time/rate is the Go team's token bucket, made for
	// exactly this (per-client request rates).
	"golang.org/x/time/rate"
)

// LimitOptions bound what one client address may do. The zero value
// takes the defaults.
type LimitOptions struct {
	// Rate is the sustained notifications per second per client (default
	// 5); Burst the most at once (default 20).
	Rate  float64
	Burst int
	// Conns is the most open connections per client (default 16).
	Conns int
	// MaxClients bounds the clients remembered; the least recently seen
	// are forgotten first (default 10000).
	MaxClients int
}

// Limiter keeps the rate and connection count of each client address. It
// is safe for concurrent use.
type Limiter struct {
	o  LimitOptions
	mu sync.Mutex
	m  map[string]*client
}

type client struct {
	lim   *rate.Limiter
	conns int
	seen  time.Time
}

// NewLimiter returns a Limiter with o's limits.
func NewLimiter(o LimitOptions) *Limiter {
	if o.Rate <= 0 {
		o.Rate = 5
	}
	if o.Burst <= 0 {
		o.Burst = 20
	}
	if o.Conns <= 0 {
		o.Conns = 16
	}
	if o.MaxClients <= 0 {
		o.MaxClients = 10000
	}
	return &Limiter{o: o, m: make(map[string]*client)}
}

func (l *Limiter) get(addr string) *client {
	c := l.m[addr]
	if c == nil {
		if len(l.m) >= l.o.MaxClients {
			l.evict()
		}
		c = &client{lim: rate.NewLimiter(rate.Limit(l.o.Rate), l.o.Burst)}
		l.m[addr] = c
	}
	c.seen = time.Now()
	return c
}

// evict forgets the idle clients seen longest ago (a tenth of the table).
func (l *Limiter) evict() {
	type aged struct {
		k string
		t time.Time
	}
	var idle []aged
	for k, c := range l.m {
		if c.conns == 0 {
			idle = append(idle, aged{k, c.seen})
		}
	}
	n := max(1, len(l.m)/10)
	for range n {
		if len(idle) == 0 {
			return
		}
		oldest := 0
		for i := range idle {
			if idle[i].t.Before(idle[oldest].t) {
				oldest = i
			}
		}
		delete(l.m, idle[oldest].k)
		idle[oldest] = idle[len(idle)-1]
		idle = idle[:len(idle)-1]
	}
}

// Allow takes one request from addr's budget and reports whether it had
// one.
func (l *Limiter) Allow(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.get(addr).lim.Allow()
}

// Open counts a new connection of addr and reports whether it is within
// the limit; when it is, Close must be called once it ends.
func (l *Limiter) Open(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.get(addr)
	if c.conns >= l.o.Conns {
		return false
	}
	c.conns++
	return true
}

// Close uncounts a connection Open allowed.
func (l *Limiter) Close(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.m[addr]; c != nil && c.conns > 0 {
		c.conns--
	}
}

// ClientAddr returns the address part of a remote address ("ip:port"),
// IPv4-mapped IPv6 unmapped, or the whole string when it has no port.
func ClientAddr(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().String()
	}
	return host
}
