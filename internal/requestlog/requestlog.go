// Package requestlog is an HTTP/1.1 server on loopback for tests that
// records the request target of every request line byte for byte.
//
// net/http's server cannot record every target a client may send: it
// answers 400 to a target that net/url does not parse ("/a%zz", which
// browsers send for such an href) before any handler runs. This server
// reads the request line and header fields itself, records the target,
// and answers from a Respond function; every response closes its
// connection, so each request comes on a connection of its own (no
// keep-alive, no pipelining to parse).
package requestlog

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Response is what the server answers to one request.
type Response struct {
	Status      int    // default 200
	ContentType string // default text/plain; charset=utf-8
	Body        string
}

// Server records request targets. It is safe for concurrent use.
type Server struct {
	ln      net.Listener
	respond func(target string) Response
	mu      sync.Mutex
	targets []string
	wg      sync.WaitGroup
}

// New starts a Server on 127.0.0.1, answering every request with
// respond(target); it is stopped when the test ends.
func New(t testing.TB, respond func(target string) Response) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("requestlog: listen: %v", err)
	}
	s := &Server{ln: ln, respond: respond}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

// Host returns the server's host:port.
func (s *Server) Host() string { return s.ln.Addr().String() }

// URL returns "http://" and the server's host:port.
func (s *Server) URL() string { return "http://" + s.Host() }

// Take returns the request targets received since the last call, in the
// order their request lines arrived.
func (s *Server) Take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.targets
	s.targets = nil
	return t
}

// maxLine bounds a request line or header field.
const maxLine = 64 << 10

func (s *Server) serve(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReaderSize(c, maxLine)
	line, err := br.ReadString('\n')
	if err != nil {
		return
	}
	for { // the header fields, up to the empty line (GET: no body)
		h, err := br.ReadString('\n')
		if err != nil {
			return
		}
		if h == "\r\n" || h == "\n" {
			break
		}
	}
	f := strings.Split(strings.TrimRight(line, "\r\n"), " ")
	if len(f) != 3 || !strings.HasPrefix(f[2], "HTTP/1.") {
		fmt.Fprint(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	s.mu.Lock()
	s.targets = append(s.targets, f[1])
	s.mu.Unlock()
	r := s.respond(f[1])
	if r.Status == 0 {
		r.Status = 200
	}
	if r.ContentType == "" {
		r.ContentType = "text/plain; charset=utf-8"
	}
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n%s",
		r.Status, statusText(r.Status), r.ContentType, len(r.Body), r.Body)
}

func statusText(code int) string {
	switch code {
	case 200:
		return "OK"
	case 404:
		return "Not Found"
	}
	return "Status"
}
