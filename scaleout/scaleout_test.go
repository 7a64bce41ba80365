package scaleout

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store/engines"
	"github.com/linkrot/linkrot/store/sqlstore"
)

// testServer is an embedded NATS server with JetStream on loopback.
type testServer struct {
	*server.Server
	opts server.Options
}

func startServer(t *testing.T) *testServer {
	t.Helper()
	s := &testServer{opts: server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true}}
	s.start(t)
	s.opts.Port = s.Addr().(*net.TCPAddr).Port
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s
}

func (s *testServer) start(t *testing.T) {
	t.Helper()
	opts := s.opts
	srv, err := server.NewServer(&opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		t.Fatal("NATS server not ready")
	}
	s.Server = srv
}

func openQueue(t *testing.T, s *testServer, o Options) *Queue {
	t.Helper()
	nc, err := Connect(s.ClientURL(), t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	q, err := Open(context.Background(), nc, o)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestPartition(t *testing.T) {
	counts := make([]int, 16)
	for i := range 1600 {
		h := fmt.Sprintf("host%d.example:80%d", i, i%10)
		p := Partition(h, 16)
		if p < 0 || p >= 16 {
			t.Fatalf("partition %d of %s out of range", p, h)
		}
		if p2 := Partition(h, 16); p2 != p {
			t.Fatalf("partition of %s not stable: %d then %d", h, p, p2)
		}
		counts[p]++
	}
	for p, n := range counts {
		if n < 50 || n > 150 { // 100 expected
			t.Errorf("partition %d has %d of 1600 hosts: uneven", p, n)
		}
	}
	if Partition("a.example", 1) != 0 || Partition("a.example", 0) != 0 {
		t.Error("one partition: want 0")
	}
	u := Unit{URL: "https://Example.org:443/a?b"}
	if u.Host() != "example.org" {
		t.Errorf("Host() = %q, want example.org (the politeness key)", u.Host())
	}
	if Subject("7-abc", 3) != "linkrot.work.7-abc.3" {
		t.Errorf("Subject = %q", Subject("7-abc", 3))
	}
}

func TestRunKey(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := RunKey(&audit.Run{ID: 1, StartedAt: at, Seeds: []string{"https://a/"}})
	b := RunKey(&audit.Run{ID: 1, StartedAt: at, Seeds: []string{"https://b/"}})
	c := RunKey(&audit.Run{ID: 1, StartedAt: at.Add(time.Second), Seeds: []string{"https://a/"}})
	if a == b || a == c || !strings.HasPrefix(a, "1-") {
		t.Errorf("run keys of other runs must differ: %q %q %q", a, b, c)
	}
	if a != RunKey(&audit.Run{ID: 1, StartedAt: at, Seeds: []string{"https://a/"}}) {
		t.Error("run key not stable")
	}
}

// TestClaim_FirstWriterWins: of many concurrent claimers exactly one
// wins; the winner claiming again (a redelivered unit) wins again with
// its value; other runs have their own seen set.
func TestClaim_FirstWriterWins(t *testing.T) {
	q := openQueue(t, startServer(t), Options{})
	ctx := context.Background()
	var wins atomic.Int32
	var winner atomic.Value
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			owner := fmt.Sprintf("crawl:https://a/p%d", i)
			won, v, err := q.Claim(ctx, "1-x", 't', "https://a/target", owner, fmt.Sprintf("v%d", i))
			if err != nil {
				t.Error(err)
				return
			}
			if won {
				wins.Add(1)
				winner.Store([2]string{owner, v})
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d claimers won, want 1", wins.Load())
	}
	w := winner.Load().([2]string)
	won, v, err := q.Claim(ctx, "1-x", 't', "https://a/target", w[0], "other")
	if err != nil || !won || v != w[1] {
		t.Errorf("the winner claiming again: won %v value %q err %v, want true %q", won, v, err, w[1])
	}
	won, v, err = q.Claim(ctx, "1-x", 't', "https://a/target", "someone-else", "other")
	if err != nil || won || v != w[1] {
		t.Errorf("another claimer: won %v value %q err %v, want false %q", won, v, err, w[1])
	}
	if won, _, err := q.Claim(ctx, "2-y", 't', "https://a/target", "someone-else", "x"); err != nil || !won {
		t.Errorf("another run's seen set: won %v err %v", won, err)
	}
	if _, ok, err := q.Seen(ctx, "1-x", 'c', "https://a/target"); err != nil || ok {
		t.Errorf("roles are separate: seen %v err %v", ok, err)
	}
}

// TestPacer_SpacingAcrossWorkers: two workers' pacers share a host's
// slots: request starts a delay apart, whoever sends them; a pause set by
// one holds the other.
func TestPacer_SpacingAcrossWorkers(t *testing.T) {
	s := startServer(t)
	p1, p2 := openQueue(t, s, Options{}).NewPacer(nil), openQueue(t, s, Options{}).NewPacer(nil)
	ctx := context.Background()
	const d = 150 * time.Millisecond
	var mu sync.Mutex
	var starts []time.Time
	var wg sync.WaitGroup
	for i := range 6 {
		p := p1
		if i%2 == 1 {
			p = p2
		}
		wg.Go(func() {
			if err := p.Reserve(ctx, "a.example", d); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			starts = append(starts, time.Now())
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(starts) != 6 {
		t.Fatal("reservations failed")
	}
	sortTimes(starts)
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < d-20*time.Millisecond {
			t.Errorf("starts %d and %d %v apart, want %v", i-1, i, gap, d)
		}
	}
	// A pause by one worker holds the other, also without spacing.
	until := time.Now().Add(400 * time.Millisecond)
	if err := p1.Pause(ctx, "b.example", until); err != nil {
		t.Fatal(err)
	}
	if err := p2.Reserve(ctx, "b.example", 0); err != nil {
		t.Fatal(err)
	}
	if now := time.Now(); now.Before(until) {
		t.Errorf("request allowed %v before the pause ended", until.Sub(now))
	}
	// Other hosts are not held.
	start := time.Now()
	if err := p2.Reserve(ctx, "c.example", 0); err != nil || time.Since(start) > 100*time.Millisecond {
		t.Errorf("an unpaused host waited %v (err %v)", time.Since(start), err)
	}
}

func sortTimes(ts []time.Time) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].Before(ts[j-1]); j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

// TestPacedTransport_RetryAfter: a 429 with Retry-After seen by one
// worker keeps every worker away from the host until it is over.
func TestPacedTransport_RetryAfter(t *testing.T) {
	var mu sync.Mutex
	var times []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		times = append(times, time.Now())
		first := len(times) == 1
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	s := startServer(t)
	c1 := &http.Client{Transport: openQueue(t, s, Options{}).NewPacer(nil).Transport(http.DefaultTransport)}
	c2 := &http.Client{Transport: openQueue(t, s, Options{}).NewPacer(nil).Transport(http.DefaultTransport)}
	resp, err := c1.Get(srv.URL + "/a")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("status %d", resp.StatusCode)
	}
	resp, err = c2.Get(srv.URL + "/b")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if gap := times[1].Sub(times[0]); gap < 950*time.Millisecond {
		t.Errorf("second worker's request %v after the 429 with Retry-After: 1", gap)
	}
}

func newStoreRun(t *testing.T) (*sqlstore.DB, *audit.Run) {
	t.Helper()
	ctx := context.Background()
	db, err := engines.Open(ctx, filepath.Join(t.TempDir(), "l.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	run := &audit.Run{StartedAt: time.Now().UTC(), Mode: "site", Seeds: []string{"http://127.0.0.1:1/"}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	return db, run
}

// TestDeadLetter: a unit no worker gets through is given up after
// DeadAfter deliveries and recorded as the run's data (a page that could
// not be fetched), and the run drains.
func TestDeadLetter(t *testing.T) {
	s := startServer(t)
	q := openQueue(t, s, Options{Partitions: 2, AckWait: 2 * time.Second})
	db, run := newStoreRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := q.EnsureConsumers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	key := RunKey(run)
	u := Unit{Run: run.ID, Key: key, Kind: KindCrawl, URL: "http://127.0.0.1:1/poison"}
	if err := q.Publish(ctx, u); err != nil {
		t.Fatal(err)
	}
	// Published twice (a redelivered parent): stored once.
	if err := q.Publish(ctx, u); err != nil {
		t.Fatal(err)
	}
	if n, err := q.Pending(ctx, key); err != nil || n != 1 {
		t.Fatalf("pending %d (err %v), want 1: Nats-Msg-Id deduplication", n, err)
	}
	var setups atomic.Int32
	done := make(chan error, 1)
	go func() {
		done <- Work(ctx, WorkerConfig{Queue: q, Store: db, Concurrency: 2, DeadAfter: 2,
			Setup: func(context.Context, int64, *Pacer) (*RunEnv, error) {
				setups.Add(1)
				return nil, errors.New("poisoned")
			}})
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := q.Pending(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("unit not given up: %d pending after %d attempts", n, setups.Load())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := setups.Load(); n != 2 {
		t.Errorf("%d attempts before the dead letter, want 2 (DeadAfter)", n)
	}
	p, err := db.PageResponse(context.Background(), run.ID, u.URL)
	if err != nil {
		t.Fatalf("dead letter not recorded: %v", err)
	}
	if !strings.HasPrefix(p.FetchError, "dead letter:") {
		t.Errorf("page fetch error %q, want the dead letter", p.FetchError)
	}
}

// TestRestart_KeepsWorkAndSeenSet: the NATS server restarted on its store
// directory still has the queued units (and their deduplication) and the
// seen set.
func TestRestart_KeepsWorkAndSeenSet(t *testing.T) {
	s := startServer(t)
	q := openQueue(t, s, Options{Partitions: 4})
	ctx := context.Background()
	if err := q.EnsureConsumers(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := q.Publish(ctx, Unit{Run: 1, Key: "1-k", Kind: KindCheck, URL: fmt.Sprintf("https://h%d.example/", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if won, _, err := q.Claim(ctx, "1-k", 'c', "https://a/", "seed", ""); err != nil || !won {
		t.Fatal(won, err)
	}
	s.Shutdown()
	s.WaitForShutdown()
	s.start(t)
	q2 := openQueue(t, s, Options{Partitions: 4})
	if n, err := q2.Pending(ctx, "1-k"); err != nil || n != 5 {
		t.Errorf("after the restart: %d units (err %v), want 5", n, err)
	}
	if won, _, err := q2.Claim(ctx, "1-k", 'c', "https://a/", "other", ""); err != nil || won {
		t.Errorf("after the restart the seen set forgot a claim: won %v err %v", won, err)
	}
	if err := q2.Publish(ctx, Unit{Run: 1, Key: "1-k", Kind: KindCheck, URL: "https://h0.example/"}); err != nil {
		t.Fatal(err)
	}
	if n, _ := q2.Pending(ctx, "1-k"); n != 5 {
		t.Errorf("a unit published again after the restart was queued twice: %d units", n)
	}
}

// TestConnect_Unreachable: one clear error, at once.
func TestConnect_Unreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	_, err = Connect("nats://"+addr, "test")
	if err == nil {
		t.Fatal("connected to nothing")
	}
	if !strings.Contains(err.Error(), "connect to NATS at nats://"+addr) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q: want one line naming the server", err)
	}
	if time.Since(start) > 6*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
}
