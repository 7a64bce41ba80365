package scaleout

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/nats-io/nats.go"
)

// CheckURL checks a NATS server URL without connecting: a host is
// required, and credentials are refused in the URL (they would be stored
// with the run's arguments; Connect reads them from the environment).
func CheckURL(addr string) error {
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" {
		return fmt.Errorf("--nats %q: want nats://host:port", addr)
	}
	if u.User != nil {
		return fmt.Errorf("--nats: no credentials in the URL (they would be stored with the run); use LINKROT_NATS_USER and LINKROT_NATS_PASSWORD, LINKROT_NATS_TOKEN or LINKROT_NATS_CREDS")
	}
	return nil
}

// Dial connects to the NATS server at addr as name (Connect) and opens
// the work queue (Open) within 10 seconds: an unreachable server or one
// without JetStream is one error, before anything is written.
func Dial(ctx context.Context, addr, name string, o Options) (*nats.Conn, *Queue, error) {
	nc, err := Connect(addr, name)
	if err != nil {
		return nil, nil, err
	}
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	q, err := Open(octx, nc, o)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("NATS at %s: %w", addr, err)
	}
	return nc, q, nil
}
