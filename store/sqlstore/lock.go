package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

// Lock is a held run lock. Release it when done; a process that dies
// leaves a stale lock that the next TryLock takes over.
type Lock struct {
	db    *DB
	token string
	opts  store.LockOptions
	// TookOver names the dead process whose stale lock was taken over,
	// nil when the lock was free.
	TookOver *LockOwner

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// TryLock takes the database's run lock for this process, once: it
// returns an error wrapping ErrLocked (a *LockedError naming the holder)
// when a live process holds it, and an error for which IsBusy is true when
// SQLite stayed locked longer than busy_timeout. A lock left by a process
// that is gone (on this host: its PID is not running, or runs a program
// started at another time; on another host: no heartbeat for StaleAfter)
// is stale and taken over. It is safe for concurrent use: the check and
// the take-over happen in one BEGIN IMMEDIATE transaction.
func (db *DB) TryLock(ctx context.Context, opts store.LockOptions) (*Lock, error) {
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	if opts.StaleAfter <= 0 {
		opts.StaleAfter = 2 * time.Minute
	}
	host, err := os.Hostname()
	if err != nil {
		host = "unknown-host"
	}
	var tok [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return nil, fmt.Errorf("lock database: %w", err)
	}
	l := &Lock{db: db, token: hex.EncodeToString(tok[:]), opts: opts,
		stop: make(chan struct{}), done: make(chan struct{})}

	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("lock database: %w", err)
	}
	defer tx.Rollback()
	if err := db.lockTx(ctx, tx); err != nil {
		return nil, fmt.Errorf("lock database: %w", err)
	}
	owner, err := readLockOwner(ctx, tx)
	now := time.Now()
	switch {
	case errors.Is(err, audit.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("lock database: %w", err)
	case owner.Host == host && processAlive(owner.PID, owner.pidStart):
		return nil, &LockedError{Owner: *owner}
	case owner.Host != host && now.Sub(owner.HeartbeatAt) < opts.StaleAfter:
		return nil, &LockedError{Owner: *owner}
	default:
		l.TookOver = owner
	}
	pid := os.Getpid()
	if _, err := tx.ExecContext(ctx, `INSERT INTO run_lock
		(id, token, pid, pid_start, host, command, run_id, acquired_at, heartbeat_at)
		VALUES (1, $1, $2, $3, $4, $5, NULL, $6, $7)
		ON CONFLICT (id) DO UPDATE SET token = excluded.token, pid = excluded.pid, pid_start = excluded.pid_start,
			host = excluded.host, command = excluded.command, run_id = NULL,
			acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at`,
		l.token, pid, processStart(pid), host, opts.Command, formatInstant(now), formatInstant(now)); err != nil {
		return nil, fmt.Errorf("lock database: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("lock database: %w", err)
	}
	go l.heartbeat()
	return l, nil
}

// LockOwner returns the process holding the run lock, or an error wrapping
// audit.ErrNotFound when nobody does. The owner may be dead (a stale
// lock); Alive says. It is safe for concurrent use.
func (db *DB) LockOwner(ctx context.Context) (*LockOwner, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("lock owner: %w", err)
	}
	defer tx.Rollback()
	o, err := readLockOwner(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("lock owner: %w", err)
	}
	return o, nil
}

func readLockOwner(ctx context.Context, tx *sql.Tx) (*LockOwner, error) {
	var (
		o           LockOwner
		runID       sql.NullInt64
		acq, beat   sql.NullString
		err         error
		pid         int64
		host, start string
	)
	err = tx.QueryRowContext(ctx, `SELECT pid, pid_start, host, command, run_id, acquired_at, heartbeat_at
		FROM run_lock WHERE id = 1`).Scan(&pid, &start, &host, &o.Command, &runID, &acq, &beat)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, audit.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	o.PID, o.pidStart, o.Host, o.RunID = int(pid), start, host, runID.Int64
	if o.AcquiredAt, err = parseInstant(acq); err != nil {
		return nil, err
	}
	if o.HeartbeatAt, err = parseInstant(beat); err != nil {
		return nil, err
	}
	return &o, nil
}

// SetRun records the run the holder writes, so that a process refused the
// lock can name it.
func (l *Lock) SetRun(ctx context.Context, runID int64) error {
	if _, err := l.db.write.ExecContext(ctx, `UPDATE run_lock SET run_id = $1 WHERE id = 1 AND token = $2`,
		runID, l.token); err != nil {
		return fmt.Errorf("lock: set run: %w", err)
	}
	return nil
}

// Release stops the heartbeat and frees the lock (if it is still this
// process's). Calling it again does nothing.
func (l *Lock) Release() error {
	var err error
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		ctx, cancel := context.WithTimeout(context.Background(), 2*busyTimeout)
		defer cancel()
		if _, e := l.db.write.ExecContext(ctx, `DELETE FROM run_lock WHERE id = 1 AND token = $1`, l.token); e != nil {
			err = fmt.Errorf("release lock: %w", e)
		}
	})
	return err
}

func (l *Lock) heartbeat() {
	defer close(l.done)
	t := time.NewTicker(l.opts.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), busyTimeout)
		res, err := l.db.write.ExecContext(ctx, `UPDATE run_lock SET heartbeat_at = $1 WHERE id = 1 AND token = $2`,
			formatInstant(time.Now()), l.token)
		cancel()
		if err != nil {
			continue // busy or closing: try again at the next tick
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			if l.opts.OnLost != nil {
				l.opts.OnLost()
			}
			return
		}
	}
}

// Alive reports whether the owner's process still runs, as far as this
// host can tell: for a process of another host, whether its heartbeat is
// younger than staleAfter.
func (o *LockOwner) Alive(staleAfter time.Duration) bool {
	host, _ := os.Hostname()
	if o.Host == host {
		return processAlive(o.PID, o.pidStart)
	}
	return time.Since(o.HeartbeatAt) < staleAfter
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return store.ErrLocked }

func (e *LockedError) Error() string {
	return "database is in use by linkrot " + e.Owner.String()
}

// LockedError is the error TryLock returns when a live process holds the
// lock; it names that process. It wraps ErrLocked.
type LockedError struct {
	Owner LockOwner
}

func (o LockOwner) String() string {
	s := fmt.Sprintf("pid %d on %s (%s", o.PID, o.Host, o.Command)
	if o.RunID != 0 {
		s += fmt.Sprintf(", run %d", o.RunID)
	}
	return s + ", started " + o.AcquiredAt.Local().Format("2006-01-02 15:04:05 MST") + ")"
}

// LockOwner describes the process holding the run lock.
type LockOwner struct {
	PID     int    `json:"pid"`
	Host    string `json:"host"`
	Command string `json:"command"`
	// RunID is the run the owner writes, 0 until it has one.
	RunID       int64     `json:"run_id,omitempty"`
	AcquiredAt  time.Time `json:"acquired_at"`
	HeartbeatAt time.Time `json:"heartbeat_at"`
	pidStart    string
}
