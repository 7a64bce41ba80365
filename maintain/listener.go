package maintain

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// ListenerOptions configure a Listener. The zero value takes the
// defaults.
type ListenerOptions struct {
	// HeaderTimeout bounds the time a client has, from connecting, to send
	// a whole draft request (line and header fields), and to send the
	// request line of anything else (default 10s): a slow client
	// (slowloris) is cut off however it trickles.
	HeaderTimeout time.Duration
	// WriteTimeout bounds writing a draft answer (default 10s).
	WriteTimeout time.Duration
	// MaxPending is the most connections whose request line is still being
	// read (default 1024); more are closed at once.
	MaxPending int
	// Handle answers a draft request; by default Receiver.Handle with
	// the rate limit. Tests replace it.
	Handle func(ctx context.Context, r Request, client string) Answer
}

// Listener is a net.Listener for http.Server that answers the draft's own
// framing itself. For each connection it reads the request line (within
// HeaderTimeout): a draft request line ("LINK Source-URL Target-URL") is
// parsed, answered and the connection closed; anything else (HTTP/1.x,
// including the HTTP/1.1 framing "UNLINKR <Source-URL> HTTP/1.1") is
// handed to net/http, the bytes read so far replayed. Connections per
// client address are bounded by the Limiter.
type Listener struct {
	inner   net.Listener
	lim     *Limiter
	o       ListenerOptions
	conns   chan net.Conn
	closed  chan struct{}
	closeMu sync.Once
	pending chan struct{} // semaphore of connections being peeked at

	wg     sync.WaitGroup // peeking and draft-answering goroutines
	mu     sync.Mutex
	active map[net.Conn]struct{}
}

// NewListener returns a Listener on inner. rc answers draft requests
// (unless o.Handle is set) and lim bounds each client.
func NewListener(inner net.Listener, rc *Receiver, lim *Limiter, o ListenerOptions) *Listener {
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 10 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.MaxPending <= 0 {
		o.MaxPending = 1024
	}
	if o.Handle == nil {
		o.Handle = func(ctx context.Context, r Request, client string) Answer {
			if !lim.Allow(client) {
				return answer(StatusTooManyRequest, "rate limit: slow down")
			}
			return rc.Handle(ctx, r, "draft", client)
		}
	}
	l := &Listener{inner: inner, lim: lim, o: o, conns: make(chan net.Conn), closed: make(chan struct{}),
		pending: make(chan struct{}, o.MaxPending), active: make(map[net.Conn]struct{})}
	go l.acceptLoop()
	return l
}

// Addr returns the inner listener's address.
func (l *Listener) Addr() net.Addr { return l.inner.Addr() }

// Accept returns the next connection for net/http.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops accepting connections. Draft requests being answered go on;
// Wait waits for them.
func (l *Listener) Close() error {
	var err error
	l.closeMu.Do(func() {
		close(l.closed)
		err = l.inner.Close()
	})
	return err
}

// Wait waits until every draft request in progress is answered, or until
// ctx is done: then the connections left are closed.
func (l *Listener) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		for c := range l.active {
			c.Close()
		}
		l.mu.Unlock()
		<-done
		return ctx.Err()
	}
}

func (l *Listener) acceptLoop() {
	for {
		c, err := l.inner.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			l.Close()
			return
		}
		client := ClientAddr(c.RemoteAddr().String())
		if !l.lim.Open(client) {
			c.SetWriteDeadline(time.Now().Add(time.Second))
			writeAnswer(c, answer(StatusTooManyRequest, "too many connections from this address"))
			c.Close()
			continue
		}
		lc := &limitedConn{Conn: c, lim: l.lim, client: client}
		select {
		case l.pending <- struct{}{}:
		default:
			lc.Close() // overloaded: too many connections still sending their first line
			continue
		}
		l.wg.Add(1)
		go l.serveConn(lc, client)
	}
}

func (l *Listener) track(c net.Conn, on bool) {
	l.mu.Lock()
	if on {
		l.active[c] = struct{}{}
	} else {
		delete(l.active, c)
	}
	l.mu.Unlock()
}

// serveConn reads the request line and routes the connection.
func (l *Listener) serveConn(c *limitedConn, client string) {
	defer l.wg.Done()
	l.track(c, true)
	defer l.track(c, false)
	release := func() { <-l.pending }
	deadline := time.Now().Add(l.o.HeaderTimeout)
	c.SetReadDeadline(deadline)
	buf, draft, err := peekLine(c)
	if err != nil {
		release()
		if len(bytes.TrimSpace(buf)) > 0 {
			c.SetWriteDeadline(time.Now().Add(l.o.WriteTimeout))
			writeAnswer(c, answer(StatusBadRequest, "%s", err))
		}
		lingerClose(c)
		return
	}
	if !draft {
		release()
		c.SetReadDeadline(time.Time{})
		pc := &prefixConn{limitedConn: c, r: io.MultiReader(bytes.NewReader(buf), c.Conn)}
		select {
		case l.conns <- pc:
		case <-l.closed:
			c.Close()
		}
		return
	}
	defer release()
	a := l.serveDraft(c, buf, client)
	c.SetWriteDeadline(time.Now().Add(l.o.WriteTimeout))
	writeAnswer(c, a)
	lingerClose(c)
}

// lingerClose ends the answer with a FIN and reads (briefly, boundedly)
// what the client still sends before closing: closing with unread bytes
// would reset the connection and could destroy the answer in flight.
func lingerClose(c *limitedConn) {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		io.CopyN(io.Discard, c.Conn, 64<<10)
	}
	c.Close()
}

// peekLine reads from c until the routing is known: the first token is
// not a draft method (HTTP: hand over), or a whole request line was read
// (draft when IsDraftLine). It returns the bytes read.
func peekLine(c net.Conn) (buf []byte, draft bool, err error) {
	tmp := make([]byte, 2048)
	for {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			line := bytes.TrimRight(buf[:i], "\r")
			return buf, IsDraftLine(line), nil
		}
		if first, _, ok := bytes.Cut(bytes.TrimLeft(buf, "\r\n"), []byte(" ")); ok && !IsDraftMethod(string(first)) {
			return buf, false, nil
		}
		if t := bytes.TrimLeft(buf, "\r\n"); len(t) > len("UNLINKR") && !bytes.ContainsAny(t[:len("UNLINKR")+1], " \t") {
			return buf, false, nil // a long first token: not ours, net/http judges it
		}
		if len(buf) > MaxLineLen {
			return buf, false, fmt.Errorf("request line longer than %d bytes", MaxLineLen)
		}
		n, rerr := c.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if rerr != nil {
			if bytes.IndexByte(buf, '\n') >= 0 {
				continue
			}
			var ne net.Error
			if errors.As(rerr, &ne) && ne.Timeout() {
				return buf, false, errors.New("request line not received in time")
			}
			if len(bytes.TrimSpace(buf)) > 0 && IsDraftLine(bytes.TrimSpace(buf)) {
				return append(buf, '\n'), true, nil // line ended by EOF (half-close)
			}
			return buf, false, fmt.Errorf("connection ended before the request line did: %w", rerr)
		}
	}
}

// serveDraft reads the rest of a draft request (header fields up to a
// blank line, section 11: "two linebreaks terminate a clause") and
// answers it.
func (l *Listener) serveDraft(c net.Conn, buf []byte, client string) Answer {
	i := bytes.IndexByte(buf, '\n')
	line := string(bytes.TrimRight(buf[:i], "\r"))
	rest := buf[i+1:]
	br := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(rest), c), 4096)
	total := 0
	for {
		h, err := br.ReadSlice('\n')
		total += len(h)
		if total > MaxHeaderLen || errors.Is(err, bufio.ErrBufferFull) {
			return answer(StatusBadRequest, "header fields longer than %d bytes", MaxHeaderLen)
		}
		if err != nil {
			if errors.Is(err, io.EOF) && len(bytes.TrimSpace(h)) == 0 {
				break // the client half-closed after its request
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return answer(StatusBadRequest, "request not completed in time")
			}
			return answer(StatusBadRequest, "request ended early")
		}
		if len(bytes.TrimRight(h, "\r\n")) == 0 {
			break
		}
		if bytes.IndexByte(h, ':') <= 0 {
			return answer(StatusBadRequest, "malformed header field")
		}
	}
	r, err := ParseRequestLine(line)
	if err != nil {
		return answer(StatusBadRequest, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.o.WriteTimeout)
	defer cancel()
	return l.o.Handle(ctx, r, client)
}

// writeAnswer writes a as an HTTP/1.1 status line with the draft's reason
// phrase (section 11: "Response = Status-Line ; As HTTP/1.1"), and a
// text/plain body.
func writeAnswer(w io.Writer, a Answer) error {
	body := sanitizeLine(a.Text) + "\n"
	_, err := fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		a.Status, Reason(a.Status), len(body), body)
	return err
}

// sanitizeLine keeps one line of printable text: control characters
// become U+FFFD, and it is bounded.
func sanitizeLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '\uFFFD'
		}
		return r
	}, s)
	return truncate(s, 600)
}

// limitedConn uncounts its client's connection once when closed.
type limitedConn struct {
	net.Conn
	lim    *Limiter
	client string
	once   sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(func() { c.lim.Close(c.client) })
	return c.Conn.Close()
}

// prefixConn replays the bytes read while routing before the rest.
type prefixConn struct {
	*limitedConn
	r io.Reader
}

func (c *prefixConn) Read(p []byte) (int, error) { return c.r.Read(p) }
