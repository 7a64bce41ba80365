package pgtest

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestDSN(t *testing.T) {
	ctx := context.Background()
	a, b := DSN(t), DSN(t)
	if a == b {
		t.Fatalf("two tests share a database: %s", a)
	}
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE x (id int)"); err != nil {
		t.Fatal(err)
	}
	var addr string
	if err := conn.QueryRow(ctx, "SELECT host(inet_server_addr())").Scan(&addr); err != nil {
		t.Fatal(err)
	}
	if addr != "127.0.0.1" {
		t.Errorf("server address %q, want loopback", addr)
	}
}

func TestPasswordRole(t *testing.T) {
	ctx := context.Background()
	s := Shared(t)
	conn, err := pgx.Connect(ctx, s.URL(PasswordUser, Password, "postgres"))
	if err != nil {
		t.Fatalf("right password: %v", err)
	}
	conn.Close(ctx)
	_, err = pgx.Connect(ctx, s.URL(PasswordUser, "wrong", "postgres"))
	if err == nil || !strings.Contains(err.Error(), "password authentication failed") {
		t.Fatalf("wrong password: %v, want password authentication failed", err)
	}
}
