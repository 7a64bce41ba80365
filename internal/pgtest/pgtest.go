// Package pgtest starts a throwaway PostgreSQL cluster on loopback for
// tests: Debian's server binaries (postgresql, /usr/lib/postgresql/N/bin),
// a cluster in a temporary directory, one fresh database per test.
//
// A test binary that uses it calls Main from its TestMain; the first DSN
// starts the server, Main stops it and removes its directory when the
// tests end. The server refuses to run as root: when the tests run as root
// it is started as the postgres user (runuser), which owns the directory.
//
// Without the binaries DSN skips the test, saying why, unless
// LINKROT_REQUIRE_POSTGRES=1 (CI), where it fails.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// RequireEnv is the environment variable that turns a missing PostgreSQL
// into a test failure instead of a skip.
const RequireEnv = "LINKROT_REQUIRE_POSTGRES"

// PasswordUser is a role that must authenticate with a password
// (scram-sha-256) over TCP; Password is its password. Every other role is
// trusted on loopback.
const (
	PasswordUser = "linkrot_pw"
	Password     = "s3cret-pw-not-for-logs"
)

var (
	mainCalled atomic.Bool
	mu         sync.Mutex
	srv        *Server
	startErr   error
	dbSeq      atomic.Int64
)

// Server is a running throwaway cluster.
type Server struct {
	Dir    string // the temporary directory holding data and socket
	Port   int
	bin    string
	asUser string // "" when the tests do not run as root
}

// Main runs the tests of m and then stops the server if one was started,
// removing its directory. It returns m.Run's exit code:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	mainCalled.Store(true)
	code := m.Run()
	mu.Lock()
	defer mu.Unlock()
	if srv != nil {
		if err := srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
		srv = nil
	}
	return code
}

// BinDir returns the directory of the PostgreSQL server binaries (initdb,
// pg_ctl, postgres), or an error saying why there is none.
func BinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if isExec(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	return "", errors.New("PostgreSQL server binaries not found (no /usr/lib/postgresql/*/bin/initdb, no initdb on PATH; Debian: apt-get install postgresql)")
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// unavailable skips tb, or fails it when RequireEnv is set.
func unavailable(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv(RequireEnv) == "1" {
		tb.Fatalf("PostgreSQL required (%s=1): %v", RequireEnv, err)
	}
	tb.Skipf("PostgreSQL not available: %v", err)
}

// Shared returns the test binary's server, starting it on first use. It
// skips (or fails, see RequireEnv) tb when PostgreSQL cannot run here.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	if !mainCalled.Load() {
		tb.Fatal("pgtest: the package's TestMain must call pgtest.Main (it stops the server)")
	}
	mu.Lock()
	defer mu.Unlock()
	if srv == nil && startErr == nil {
		srv, startErr = Start()
	}
	if startErr != nil {
		unavailable(tb, startErr)
	}
	return srv
}

// DSN creates a fresh, empty database on the shared server and returns its
// URL (user postgres, trusted on loopback). The database is dropped when
// the test ends, after the cleanups registered later (closing stores).
func DSN(tb testing.TB) string {
	tb.Helper()
	return dsn(tb, "")
}

// templates are the template databases made by DSNFrom, by key.
var templates = map[string]string{}

// DSNFrom is DSN for a database that starts as a copy of a template: the
// first call with key creates the template and runs init on its URL (init
// must close its connections), later calls copy it (CREATE DATABASE ...
// TEMPLATE), which is much faster than running init again.
func DSNFrom(tb testing.TB, key string, init func(dsn string) error) string {
	tb.Helper()
	s := Shared(tb)
	mu.Lock()
	tpl, ok := templates[key]
	if !ok {
		tpl = fmt.Sprintf("tpl%d_%d", os.Getpid(), dbSeq.Add(1))
		err := s.Exec(context.Background(), "CREATE DATABASE "+tpl)
		if err == nil {
			err = init(s.URL("postgres", "", tpl))
		}
		if err != nil {
			mu.Unlock()
			tb.Fatalf("pgtest: template %s: %v", key, err)
		}
		templates[key] = tpl
	}
	mu.Unlock()
	return dsn(tb, tpl)
}

func dsn(tb testing.TB, template string) string {
	tb.Helper()
	s := Shared(tb)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	create := "CREATE DATABASE " + name
	if template != "" {
		create += " TEMPLATE " + template
	}
	if err := s.Exec(context.Background(), create); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Error(err)
		}
	})
	return s.URL("postgres", "", name)
}

// URL returns the URL of database name on s as user (with password, when
// not empty).
func (s *Server) URL(user, password, name string) string {
	u := url.URL{Scheme: "postgres", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)), Path: "/" + name,
		RawQuery: "sslmode=disable"}
	if password != "" {
		u.User = url.UserPassword(user, password)
	} else {
		u.User = url.User(user)
	}
	return u.String()
}

// Exec runs one statement on the server's postgres database as the
// superuser.
func (s *Server) Exec(ctx context.Context, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL("postgres", "", "postgres"))
	if err != nil {
		return fmt.Errorf("pgtest: connect: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("pgtest: %s: %w", sql, err)
	}
	return nil
}

// Start creates a cluster in a new temporary directory and starts it on
// a free loopback port. The caller stops it (Stop).
func Start() (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("the tests run as root, and the server refuses root: no postgres user to run it as: %w", err)
		}
		s.asUser = u.Username
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if s.Dir, err = os.MkdirTemp("", "pgtest-"); err != nil {
			return nil, err
		}
		if err := os.Chown(s.Dir, uid, gid); err != nil {
			os.RemoveAll(s.Dir)
			return nil, err
		}
	} else if s.Dir, err = os.MkdirTemp("", "pgtest-"); err != nil {
		return nil, err
	}
	if err := s.start(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) data() string { return filepath.Join(s.Dir, "data") }

func (s *Server) run(name string, args ...string) error {
	cmdName := filepath.Join(s.bin, name)
	if s.asUser != "" {
		args = append([]string{"-u", s.asUser, "--", cmdName}, args...)
		cmdName = "runuser"
	}
	cmd := exec.Command(cmdName, args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: %s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

func (s *Server) start() error {
	if err := s.run("initdb", "-D", s.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return err
	}
	// Loopback only; one role needs its password (scram-sha-256), the
	// others are trusted.
	hba := fmt.Sprintf("local all all trust\nhost all %[1]s 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.1/32 trust\n", PasswordUser)
	if err := s.writeFile(filepath.Join(s.data(), "pg_hba.conf"), hba); err != nil {
		return err
	}
	var err error
	for range 5 { // the free port may be taken between finding and binding
		if s.Port, err = freePort(); err != nil {
			return err
		}
		if err = s.pgctlStart(); err == nil {
			break
		}
	}
	if err != nil {
		return err
	}
	return s.Exec(context.Background(), fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s' CREATEDB", PasswordUser, Password))
}

func (s *Server) pgctlStart() error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", s.Port, s.Dir)
	return s.run("pg_ctl", "-D", s.data(), "-o", opts, "-l", filepath.Join(s.Dir, "log"), "-w", "-t", "60", "start")
}

// Restart stops and starts the server on the same port and data.
func (s *Server) Restart() error {
	if err := s.run("pg_ctl", "-D", s.data(), "-m", "fast", "-w", "stop"); err != nil {
		return err
	}
	return s.pgctlStart()
}

// writeFile writes a file of the cluster, owned by the server's user.
func (s *Server) writeFile(p, content string) error {
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		return err
	}
	if s.asUser != "" {
		u, err := user.Lookup(s.asUser)
		if err != nil {
			return err
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return os.Chown(p, uid, gid)
	}
	return nil
}

// Stop stops the server, if it runs, and removes its directory.
func (s *Server) Stop() error {
	var err error
	if _, e := os.Stat(filepath.Join(s.data(), "postmaster.pid")); e == nil {
		err = s.run("pg_ctl", "-D", s.data(), "-m", "immediate", "-w", "stop")
	}
	return errors.Join(err, os.RemoveAll(s.Dir))
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
