package scaleout

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// TestConnect_Credentials: a server that asks for a user and password
// takes the ones from LINKROT_NATS_USER / LINKROT_NATS_PASSWORD; wrong or
// missing ones are one line naming the server, without the password.
func TestConnect_Credentials(t *testing.T) {
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		Username: "linkrot", Password: "right-s3cret",
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	url := srv.ClientURL()

	for _, tc := range []struct {
		name, user, pass string
		ok               bool
	}{
		{"right", "linkrot", "right-s3cret", true},
		{"wrong password", "linkrot", "wrong-s3cret", false},
		{"no credentials", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("LINKROT_NATS_USER", tc.user)
			t.Setenv("LINKROT_NATS_PASSWORD", tc.pass)
			start := time.Now()
			nc, err := Connect(url, t.Name())
			if tc.ok {
				if err != nil {
					t.Fatalf("Connect with the right credentials: %v", err)
				}
				nc.Close()
				return
			}
			if err == nil {
				nc.Close()
				t.Fatal("connected with wrong or no credentials")
			}
			msg := err.Error()
			if !strings.Contains(msg, "connect to NATS at "+url) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming the server", msg)
			}
			if !strings.Contains(strings.ToLower(msg), "authorization") {
				t.Errorf("error %q: want the server's authorization refusal", msg)
			}
			if strings.Contains(msg, "s3cret") {
				t.Errorf("error %q shows a password", msg)
			}
			// An authorization refusal is final: no reconnect loop.
			if d := time.Since(start); d > 6*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}
