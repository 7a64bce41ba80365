package sqlstore

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

func mustLock(tb testing.TB, db *DB, opts store.LockOptions) *Lock {
	tb.Helper()
	l, err := db.TryLock(context.Background(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Release() })
	return l
}

// setLockRow replaces the lock row, as another process would have left it.
func setLockRow(tb testing.TB, db *DB, pid int, pidStart, host string, heartbeat time.Time) {
	tb.Helper()
	if _, err := db.write.Exec(`INSERT INTO run_lock
		(id, token, pid, pid_start, host, command, run_id, acquired_at, heartbeat_at)
		VALUES (1, 'other', $1, $2, $3, 'audit', 7, $4, $5)
		ON CONFLICT (id) DO UPDATE SET token = excluded.token, pid = excluded.pid, pid_start = excluded.pid_start,
			host = excluded.host, command = excluded.command, run_id = excluded.run_id,
			acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at`,
		pid, pidStart, host, formatInstant(heartbeat.Add(-time.Hour)), formatInstant(heartbeat)); err != nil {
		tb.Fatal(err)
	}
}

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(tb testing.TB) int {
	tb.Helper()
	name, args := os.Args[0], []string{"-test.run=^$"}
	if p, err := exec.LookPath("true"); err == nil {
		name, args = p, nil // faster than starting the test binary
	}
	cmd := exec.Command(name, args...)
	if err := cmd.Run(); err != nil {
		tb.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestLock_Exclusive(t *testing.T) { forEachBackend(t, testLock_Exclusive) }

func testLock_Exclusive(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	l := mustLock(t, db, store.LockOptions{Command: "audit"})
	if l.TookOver != nil {
		t.Errorf("fresh lock took over %+v", l.TookOver)
	}
	if err := l.SetRun(ctx, 42); err != nil {
		t.Fatal(err)
	}
	_, err := db.TryLock(ctx, store.LockOptions{Command: "crawl"})
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, store.ErrLocked) {
		t.Fatalf("second TryLock = %v, want a LockedError", err)
	}
	host, _ := os.Hostname()
	msg := err.Error()
	for _, want := range []string{"pid " + strconv.Itoa(os.Getpid()), host, "audit", "run 42", "started "} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name %q", msg, want)
		}
	}
	owner, err := db.LockOwner(ctx)
	if err != nil || owner.PID != os.Getpid() || owner.RunID != 42 || !owner.Alive(time.Minute) {
		t.Errorf("LockOwner = %+v, %v", owner, err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
	if _, err := db.LockOwner(ctx); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("LockOwner after release = %v", err)
	}
	mustLock(t, db, store.LockOptions{})
}

// TestLock_Stale checks the take-over of locks whose process is gone.
func TestLock_Stale(t *testing.T) { forEachBackend(t, testLock_Stale) }

func testLock_Stale(t *testing.T) {
	host, _ := os.Hostname()
	now := time.Now()
	tests := []struct {
		name      string
		pid       func(testing.TB) int
		pidStart  string
		host      string
		heartbeat time.Time
		stale     bool
	}{
		{"DeadPID", deadPID, "", host, now, true},
		{"LivePID", func(testing.TB) int { return os.Getpid() }, "", host, now.Add(-time.Hour), false},
		{"LivePIDSameStart", func(testing.TB) int { return os.Getpid() }, processStart(os.Getpid()), host, now, false},
		// The PID runs another program (reused after a crash or reboot).
		{"ReusedPID", func(testing.TB) int { return os.Getpid() }, "1", host, now, processStart(os.Getpid()) != ""},
		{"OtherHostFresh", func(testing.TB) int { return 1 }, "", host + ".elsewhere", now, false},
		{"OtherHostSilent", func(testing.TB) int { return 1 }, "", host + ".elsewhere", now.Add(-10 * time.Minute), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := MustOpen(t)
			pid := tt.pid(t)
			setLockRow(t, db, pid, tt.pidStart, tt.host, tt.heartbeat)
			l, err := db.TryLock(context.Background(), store.LockOptions{Command: "audit"})
			if !tt.stale {
				if !errors.Is(err, store.ErrLocked) {
					t.Fatalf("TryLock = %v, want ErrLocked", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("stale lock not taken over: %v", err)
			}
			defer l.Release()
			if l.TookOver == nil || l.TookOver.PID != pid || l.TookOver.RunID != 7 {
				t.Errorf("TookOver = %+v, want pid %d run 7", l.TookOver, pid)
			}
		})
	}
}

// TestLock_Busy checks that TryLock waits for another connection's write
// transaction (busy_timeout) instead of failing with SQLITE_BUSY.
//
// SQLite-only: busy_timeout and SQLITE_BUSY (PostgreSQL's TryLock waits on an advisory lock; TestPostgres_LockConcurrent).
func TestLock_Busy(t *testing.T) {
	db := MustOpen(t)
	other := rawDB(t, db.Path(), "_pragma=busy_timeout(1000)")
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(300 * time.Millisecond)
		conn.ExecContext(context.Background(), "ROLLBACK")
	}()
	start := time.Now()
	l := mustLock(t, db, store.LockOptions{})
	<-done
	if time.Since(start) < 250*time.Millisecond {
		t.Errorf("TryLock did not wait for the other writer (%v)", time.Since(start))
	}
	l.Release()
	if IsBusy(errors.New("database is locked")) {
		t.Error("IsBusy matched a plain error by its text")
	}
}

// TestLock_Lost checks that a holder whose lock was taken over learns it
// at its next heartbeat.
func TestLock_Lost(t *testing.T) { forEachBackend(t, testLock_Lost) }

func testLock_Lost(t *testing.T) {
	db := MustOpen(t)
	lost := make(chan struct{})
	l := mustLock(t, db, store.LockOptions{Heartbeat: 10 * time.Millisecond, OnLost: func() { close(lost) }})
	setLockRow(t, db, 1, "", "elsewhere", time.Now())
	select {
	case <-lost:
	case <-time.After(5 * time.Second):
		t.Fatal("OnLost not called")
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	// Release left the other process's lock alone.
	if o, err := db.LockOwner(context.Background()); err != nil || o.Host != "elsewhere" {
		t.Errorf("lock after release = %+v, %v", o, err)
	}
}
